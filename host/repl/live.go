package repl

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"
)

// The live area is the bottom of the screen while a turn runs on a
// terminal: the text streamed so far that is not yet shown for good (a
// line not ended, a Markdown block not closed), a status row with a
// spinner and the time the model or the running tool has taken, and the
// input line with the lines queued for after the turn. The printer erases
// it, writes what is done for good above it, and draws it again; a ticker
// redraws it while the turn runs, so the screen never freezes.
type liveArea struct {
	status  string // "thinking", a tool's name; "" shows no status row
	since   time.Time
	tick    chan struct{} // closed to stop the ticker; nil when none runs
	frame   int
	input   bool // the input line is shown
	text    string
	queued  []string
	paused  bool // a question is asked: nothing is drawn
	rows    int  // rows drawn now
	running []runningCall
}

type runningCall struct {
	id, name string
	since    time.Time
}

// maxPreviewRows bounds the rows of streamed text shown before it is
// complete (the rest is shown once it is).
const maxPreviewRows = 8

// liveMode: the printer keeps a live area (a terminal, a session).
func (p *TextPrinter) liveMode() bool { return p.opts.TTY && !p.opts.OneShot }

func (p *TextPrinter) columns() int {
	if p.opts.Columns != nil {
		if c := p.opts.Columns(); c > 0 {
			return c
		}
	}
	if p.opts.Width > 0 {
		return p.opts.Width
	}
	return 100
}

// emit writes s for good, above the live area; p.mu is held.
func (p *TextPrinter) emit(s string) {
	var b strings.Builder
	b.WriteString(p.eraseLive())
	b.WriteString(s)
	b.WriteString(p.drawLive())
	if b.Len() > 0 {
		_, _ = p.out.Write([]byte(b.String()))
	}
}

// toErr writes s to errOut, above the live area; p.mu is held.
func (p *TextPrinter) toErr(s string) {
	if !p.liveMode() {
		_, _ = p.errOut.Write([]byte(s))
		return
	}
	if e := p.eraseLive(); e != "" {
		_, _ = p.out.Write([]byte(e))
	}
	_, _ = p.errOut.Write([]byte(s))
	if d := p.drawLive(); d != "" {
		_, _ = p.out.Write([]byte(d))
	}
}

// eraseLive is what erases the live area; p.mu is held.
func (p *TextPrinter) eraseLive() string {
	rows := p.live.rows
	p.live.rows = 0
	switch {
	case rows == 0:
		return ""
	case rows == 1:
		return "\r\033[K"
	default:
		return fmt.Sprintf("\r\033[%dA\033[J", rows-1)
	}
}

// drawLive is what draws the live area, from the start of a line; the
// cursor ends on its last row; p.mu is held.
func (p *TextPrinter) drawLive() string {
	if !p.liveMode() || p.live.paused {
		return ""
	}
	width := max(p.columns()-1, 10)
	var rows []string
	preview := p.pending
	if p.md != nil {
		preview += p.md.buf.String()
	}
	if visible := ansiCodes.ReplaceAllString(preview, ""); strings.TrimSpace(visible) != "" {
		var wrapped []string
		for _, l := range strings.Split(strings.TrimRight(visible, "\n"), "\n") {
			wrapped = append(wrapped, wrapRunes(l, width)...)
		}
		if len(wrapped) > maxPreviewRows {
			wrapped = wrapped[len(wrapped)-maxPreviewRows:]
		}
		rows = append(rows, wrapped...)
	}
	if p.live.status != "" {
		s := fmt.Sprintf("%s %s %s", spinFrames[p.live.frame%len(spinFrames)], p.live.status,
			formatDuration(p.opts.Now().Sub(p.live.since)))
		if p.live.input {
			s += " · esc to interrupt"
		}
		rows = append(rows, p.style(ansiDim, cutTo(s, width)))
	}
	if p.live.input {
		for i, q := range p.live.queued {
			if i == 2 && len(p.live.queued) > 3 {
				rows = append(rows, p.style(ansiDim, fmt.Sprintf("  … %d more queued", len(p.live.queued)-2)))
				break
			}
			rows = append(rows, p.style(ansiDim, cutTo("  queued: "+oneLine(q, width), width)))
		}
		text := strings.ReplaceAll(p.live.text, "\n", "↵")
		rows = append(rows, "> "+tailTo(text, width-2))
	}
	p.live.rows = len(rows)
	return strings.Join(rows, "\n")
}

// redraw draws the live area again; p.mu is held.
func (p *TextPrinter) redraw() {
	if p.liveMode() {
		p.emit("")
	}
}

// setStatus sets the status row and runs the ticker while there is one;
// p.mu is held.
func (p *TextPrinter) setStatus(status string, since time.Time) {
	p.live.status, p.live.since = status, since
	if status == "" {
		if p.live.tick != nil {
			close(p.live.tick)
			p.live.tick = nil
		}
		return
	}
	if p.live.tick != nil {
		return
	}
	stop := make(chan struct{})
	p.live.tick = stop
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			p.mu.Lock()
			select {
			case <-stop:
			default:
				p.live.frame++
				p.redraw()
			}
			p.mu.Unlock()
		}
	}()
}

// toolStatus shows the latest tool call still running, else thinking;
// p.mu is held.
func (p *TextPrinter) toolStatus() {
	if n := len(p.live.running); n > 0 {
		c := p.live.running[n-1]
		status := c.name
		if n > 1 {
			status += fmt.Sprintf(" (+%d)", n-1)
		}
		p.setStatus(status, c.since)
		return
	}
	p.setStatus("thinking", p.opts.Now())
}

// ShowInput shows the input line of a running turn: the lines queued and
// the text being typed.
func (p *TextPrinter) ShowInput(queued []string, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live.input, p.live.queued, p.live.text = true, queued, text
	p.redraw()
}

// HideInput takes the input line away (the turn ended).
func (p *TextPrinter) HideInput() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live.input, p.live.queued, p.live.text = false, nil, ""
	p.redraw()
}

// Resume draws the live area again after Pause (the question was
// answered).
func (p *TextPrinter) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live.paused {
		p.live.paused = false
		p.redraw()
	}
}

var ansiCodes = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// wrapRunes cuts s into rows of at most width columns.
func wrapRunes(s string, width int) []string {
	var rows []string
	var b strings.Builder
	w := 0
	for _, r := range s {
		if r == '\t' {
			r = ' '
		}
		rw := runewidth.RuneWidth(r)
		if w+rw > width {
			rows = append(rows, b.String())
			b.Reset()
			w = 0
		}
		b.WriteRune(r)
		w += rw
	}
	return append(rows, b.String())
}

// cutTo is s cut to width columns.
func cutTo(s string, width int) string {
	return runewidth.Truncate(s, width, "…")
}

// tailTo is the end of s that fits width columns, marked when cut.
func tailTo(s string, width int) string {
	if runewidth.StringWidth(s) <= width {
		return s
	}
	r := []rune(s)
	w := 1 // the mark
	i := len(r)
	for i > 0 && w+runewidth.RuneWidth(r[i-1]) <= width {
		i--
		w += runewidth.RuneWidth(r[i])
	}
	return "…" + string(r[i:])
}
