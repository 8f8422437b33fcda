package repl

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/providers"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// Info describes a run, for the banner (text) or the session event
// (stream-json).
type Info struct {
	SessionID string
	StateDir  string
	Agent     string
	Provider  string
	Model     string
	Tools     []string
	// WorkDir, Approval and MaxContextSize are shown in the banner.
	WorkDir        string
	Approval       string
	MaxContextSize int64
	// Server is the server a session runs in (run --server); "" for a
	// session of this process.
	Server string
}

// Printer shows a run: the loop's events, the approval decisions and the
// run's start. It is safe for concurrent use (approvals arrive from the
// tools' goroutines).
type Printer interface {
	loop.Observer
	// Start shows the run's identity.
	Start(Info)
	// Pause stops transient output (the spinner) before the terminal is
	// used to ask the user something.
	Pause()
}

// TextOptions configure a TextPrinter.
type TextOptions struct {
	// TTY enables the spinner and the model's reasoning (dimmed).
	TTY bool
	// Color enables colours; Markdown renders the assistant's text (both
	// for a terminal without NO_COLOR).
	Color    bool
	Markdown bool
	// Width is the terminal's width, for Markdown; 0 means 100.
	Width int
	// OneShot: the assistant's text is not shown as it streams; the text of
	// a step that goes on to call tools is shown on errOut, and the final
	// answer is the caller's to print (stdout carries only that).
	OneShot bool
	// OutputLines is how many last lines of a tool's output are shown under
	// its header; 0 means 4.
	OutputLines int
	// Now returns the time; nil means time.Now. For the spinner.
	Now func() time.Time
	// Columns is the terminal's width now (it may be resized), for the
	// live area; nil or 0 means Width.
	Columns func() int
}

// TextPrinter shows a run for a human: the assistant's text as it streams
// (rendered Markdown on a terminal), a header when each tool call starts
// and its outcome with the last lines of its output when it ends,
// approvals, retries and errors, and the token and context use after each
// turn.
type TextPrinter struct {
	out, errOut io.Writer
	opts        TextOptions

	mu         sync.Mutex
	midLine    bool // the last thing written to out did not end a line
	reasoning  bool // reasoning is being written
	spin       *spinner
	md         *markdown
	stepText   strings.Builder // OneShot: the text of the current step
	waited     map[string]time.Duration
	lastHeader string
	lastOutput string
	context    int64 // the context's size in tokens after the last response
	maxContext int64
	pending    string   // live mode: the line written so far, not yet ended
	live       liveArea // live mode: the bottom of the screen (live.go)
}

// NewTextPrinter returns a TextPrinter writing to out and errOut.
func NewTextPrinter(out, errOut io.Writer, opts TextOptions) *TextPrinter {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OutputLines <= 0 {
		opts.OutputLines = 4
	}
	p := &TextPrinter{out: out, errOut: errOut, opts: opts, waited: map[string]time.Duration{}}
	if opts.Markdown && !opts.OneShot {
		p.md = newMarkdown(opts.Width)
	}
	return p
}

const (
	ansiBold   = "\033[1m"
	ansiYellow = "\033[33m"
	ansiDim    = "\033[2m"
	ansiRed    = "\033[31m"
	ansiGreen  = "\033[32m"
	ansiCyan   = "\033[36m"
	ansiReset  = "\033[0m"
)

func (p *TextPrinter) style(code, s string) string {
	if !p.opts.Color || s == "" {
		return s
	}
	return code + s + ansiReset
}

// Start prints the banner: agent, model, work dir, approval mode, session
// and a hint.
func (p *TextPrinter) Start(info Info) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.maxContext = info.MaxContextSize
	var b strings.Builder
	if info.Server != "" {
		fmt.Fprintf(&b, "%s · agent %s · model %s/%s · server %s\n", p.style(ansiBold, "kosong-host"), info.Agent, info.Provider, info.Model, info.Server)
	} else {
		fmt.Fprintf(&b, "%s · agent %s · model %s/%s · %d tools\n", p.style(ansiBold, "kosong-host"), info.Agent, info.Provider, info.Model, len(info.Tools))
	}
	if info.WorkDir != "" {
		fmt.Fprintf(&b, "%s\n", p.style(ansiDim, "work dir  "+info.WorkDir))
	}
	if info.Approval != "" {
		fmt.Fprintf(&b, "%s\n", p.style(ansiDim, "approval  "+info.Approval))
	}
	fmt.Fprintf(&b, "%s\n", p.style(ansiDim, "session   "+info.SessionID))
	fmt.Fprintf(&b, "%s\n", p.style(ansiDim, "/help for commands · Enter sends · Ctrl-J for a new line · Esc interrupts · Ctrl-S steers a running turn"))
	io.WriteString(p.out, b.String())
}

// Pause stops the spinner; in live mode it also shows the text held so
// far and takes the live area away until Resume or the next step.
func (p *TextPrinter) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopSpinner()
	p.flushMarkdown()
	if p.liveMode() {
		p.newline()
		p.live.paused = true
		if e := p.eraseLive(); e != "" {
			io.WriteString(p.out, e)
		}
	}
}

// LastOutput is the header and the whole output of the last tool call
// (for /last and Ctrl-O).
func (p *TextPrinter) LastOutput() (header, output string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastHeader, p.lastOutput
}

// ShowLastOutput prints the whole output of the last tool call above the
// live area, for Ctrl-O pressed while a turn runs.
func (p *TextPrinter) ShowLastOutput() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.liveMode() {
		return
	}
	if p.lastHeader == "" {
		p.emit(p.style(ansiDim, "no tool call yet") + "\n")
		return
	}
	out := p.lastOutput
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	p.emit(p.lastHeader + "\n" + out)
}

// Observe prints one event.
func (p *TextPrinter) Observe(e loop.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := e.(type) {
	case loop.StepStarted:
		p.stepText.Reset()
		if p.liveMode() {
			p.live.paused, p.live.running = false, nil
			p.setStatus("thinking", p.opts.Now())
			p.redraw()
			return
		}
		p.startSpinner()
	case loop.TextDelta:
		if p.opts.OneShot {
			p.stepText.WriteString(e.Text)
			return
		}
		text := e.Text
		if p.md != nil {
			// The spinner goes on until a rendered block is ready; in
			// live mode the block is shown raw meanwhile.
			if text = p.md.write(text); text == "" {
				p.redraw()
				return
			}
		}
		p.stopSpinner()
		if p.reasoning {
			p.reasoning = false
			p.newline()
		}
		p.write(text)
	case loop.ReasoningDelta:
		if !p.opts.TTY || p.opts.OneShot {
			return
		}
		p.stopSpinner()
		p.reasoning = true
		p.write(p.style(ansiDim, e.Text))
	case loop.ToolCallStarted:
		p.stopSpinner()
		p.flushMarkdown()
		if p.opts.OneShot && strings.TrimSpace(p.stepText.String()) != "" {
			p.line(strings.TrimRight(p.stepText.String(), "\n"))
			p.stepText.Reset()
		}
		p.line(fmt.Sprintf("%s %s  %s", p.style(ansiCyan, "•"), p.style(ansiBold, e.Call.Name), callSummary(e.Call.Name, e.Call.Arguments)))
		if p.liveMode() {
			p.live.running = append(p.live.running, runningCall{id: e.Call.ID, name: e.Call.Name, since: p.opts.Now()})
			p.toolStatus()
		}
	case loop.ToolCallFinished:
		p.stopSpinner()
		if p.liveMode() {
			p.live.running = slices.DeleteFunc(p.live.running, func(c runningCall) bool { return c.id == e.Call.ID })
			p.toolStatus()
		}
		p.finished(e)
	case loop.Steered:
		p.stopSpinner()
		p.flushMarkdown()
		for _, t := range e.Texts {
			p.line(p.style(ansiBold, "> "+strings.ReplaceAll(t, "\n", "\n  ")) + p.style(ansiDim, "  (sent into the running turn)"))
		}
	case loop.ToolProgress:
		p.stopSpinner()
		p.line(p.style(ansiDim, "  … "+e.ToolName+": "+progressText(e)))
	case loop.Compacted:
		p.stopSpinner()
		p.newline()
		p.line(p.style(ansiDim, e.String()))
	case loop.StepRetried:
		p.stopSpinner()
		p.newline()
		kept := ""
		if len(e.Kept) > 0 {
			kept = fmt.Sprintf("; keeping the %s that ran: %s", pluralWord(len(e.Kept), "tool call"), callNames(e.Kept))
		}
		p.toErr(fmt.Sprintf("! %v; retrying in %s (attempt %d of %d)%s\n", e.Err, formatDuration(e.Delay), e.Attempt, e.MaxAttempts, kept))
	case loop.ResponseStopped:
		if w := stopWarning(e); w != "" {
			p.stopSpinner()
			p.flushMarkdown()
			p.newline()
			p.toErr(w + "\n")
		}
	case loop.ApprovalDecided:
		p.approval(e)
	case loop.UsageReported:
		if t := e.Usage.InputTokens + e.Usage.OutputTokens; t > 0 {
			p.context = t
		}
	case loop.HookRan, loop.PermissionDecided, loop.AgentReloaded:
		if line, warn := guardText(e); line != "" {
			p.stopSpinner()
			p.newline()
			if warn {
				p.toErr(line + "\n")
			} else {
				p.line(p.style(ansiDim, line))
			}
		}
	case loop.LimitReached:
		p.stopSpinner()
		p.flushMarkdown()
		p.newline()
		p.toErr(e.Text + "\n")
	case loop.TurnFailed:
		p.stopSpinner()
		p.flushMarkdown()
		p.newline()
		p.toErr(fmt.Sprintf("error: %v\n", e.Err))
	case loop.TurnEnded:
		p.stopSpinner()
		p.flushMarkdown()
		if p.liveMode() {
			p.newline()
			p.live.running = nil
			p.setStatus("", time.Time{})
		}
		switch e.Reason {
		case loop.StopCancelled:
			p.line(p.style(ansiDim, "Interrupted."))
		case loop.StopToolCallRepeat:
			p.line(p.style(ansiDim, "Stopped: the model kept making the same tool call."))
		}
		p.line(p.style(ansiDim, "["+p.status(e)+"]"))
	}
}

// stopWarning is the warning for a response the provider stopped early
// ("" for a normal stop).
func stopWarning(e loop.ResponseStopped) string {
	switch e.Reason {
	case providers.StopMaxTokens:
		if len(e.Truncated) > 0 {
			return fmt.Sprintf("! the response was cut off by the output token limit (max_tokens): %s not run (%s); the model was told to retry in smaller parts",
				pluralWord(len(e.Truncated), "tool call"), callNames(e.Truncated))
		}
		return "! the response was cut off by the output token limit (max_tokens): the answer is incomplete"
	case providers.StopContentFilter:
		return "! the provider stopped the response (content_filter)"
	}
	return ""
}

func callNames(calls []providers.ToolCall) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// pluralWord is "tool call" or "2 tool calls".
func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// status is "2 steps · 12.4k tokens · 9% of 128k".
func (p *TextPrinter) status(e loop.TurnEnded) string {
	s := plural(e.Steps, "step")
	if p.context > 0 {
		s += " · " + compactTokens(p.context) + " tokens"
		if p.maxContext > 0 {
			s += fmt.Sprintf(" · %d%% of %s", p.context*100/p.maxContext, compactTokens(p.maxContext))
		}
	}
	if e.Usage.Total() > 0 {
		s += fmt.Sprintf(" · turn: %s in, %s out", thousands(e.Usage.InputTokens), thousands(e.Usage.OutputTokens))
		if e.Priced {
			s += " · " + dollars(e.CostUSD)
		}
	}
	return s
}

// dollars is a cost in US dollars: $0.0123, $1.23.
func dollars(usd float64) string {
	if usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// finished prints a call's outcome: mark, name, summary, brief, its own
// duration apart from the time its approval took, and the last lines of
// its output.
func (p *TextPrinter) finished(e loop.ToolCallFinished) {
	mark, brief := p.style(ansiGreen, "✓"), Brief(e.Result)
	switch {
	case e.Cancelled:
		mark, brief = p.style(ansiRed, "✗"), "cancelled"
	case e.Result.IsError():
		mark = p.style(ansiRed, "✗")
	}
	took := e.Duration
	timing := ""
	if w, ok := p.waited[e.Call.ID]; ok {
		delete(p.waited, e.Call.ID)
		took = max(took-w, 0)
		timing = ", approval " + formatDuration(w)
	}
	timing = formatDuration(took) + timing
	summary := callSummary(e.Call.Name, e.Call.Arguments)
	p.line(fmt.Sprintf("  %s %s: %s %s", mark, e.Call.Name, brief, p.style(ansiDim, "("+timing+")")))
	if e.Reminder != "" {
		p.line(p.style(ansiDim, fmt.Sprintf("  ! the same call %d times in a row: the model was reminded", e.Repeat)))
	}
	output := e.Result.OutputText()
	p.lastHeader = strings.TrimSpace(e.Call.Name + "  " + summary)
	p.lastOutput = output
	lines, before := tailLines(output, p.opts.OutputLines)
	if before > 0 {
		more := fmt.Sprintf("    │ … %d more lines (/last or Ctrl-O to see all)", before)
		if p.opts.OneShot { // no /last after the run
			more = fmt.Sprintf("    │ … %d more lines", before)
		}
		p.line(p.style(ansiDim, more))
	}
	for _, l := range lines {
		p.line(p.style(ansiDim, "    │ ") + oneLine(l, 160))
	}
}

// flushMarkdown writes the Markdown held back; p.mu is held.
func (p *TextPrinter) flushMarkdown() {
	if p.md != nil {
		p.write(p.md.flush())
	}
}

func (p *TextPrinter) approval(e loop.ApprovalDecided) {
	if e.Waited > 0 {
		p.waited[e.ToolCallID] = e.Waited
	}
	var s string
	switch {
	case e.Answer == approval.AnswerYolo:
		return
	case e.Answer == approval.AnswerUnattended:
		s = fmt.Sprintf("  ! %s: %s rejected: no one to ask for approval; run with --yolo to allow it", e.ToolName, e.Action)
	case e.Answer == approval.AnswerSession:
		s = fmt.Sprintf("  %s: %s (approved for this session)", e.ToolName, e.Action)
	case e.ForSession:
		s = fmt.Sprintf("  %s: %s approved for this session", e.ToolName, e.Action)
	case e.Approved:
		s = fmt.Sprintf("  %s: %s approved", e.ToolName, e.Action)
	case e.Feedback != "":
		s = fmt.Sprintf("  %s: %s rejected: %s", e.ToolName, e.Action, e.Feedback)
	default:
		s = fmt.Sprintf("  %s: %s rejected", e.ToolName, e.Action)
	}
	if e.Waited > 0 {
		s += " (after " + formatDuration(e.Waited) + ")"
	}
	p.stopSpinner()
	p.line(p.style(ansiDim, s))
}

func (p *TextPrinter) write(s string) {
	if s == "" {
		return
	}
	if p.liveMode() {
		// Whole lines are written for good; the rest waits in the live
		// area for its line end.
		p.pending += s
		if i := strings.LastIndexByte(p.pending, '\n'); i >= 0 {
			done := p.pending[:i+1]
			p.pending = p.pending[i+1:]
			p.emit(done)
		} else {
			p.redraw()
		}
		return
	}
	io.WriteString(p.out, s)
	p.midLine = !strings.HasSuffix(s, "\n") && !strings.HasSuffix(s, "\n"+ansiReset)
}

// newline ends a started line.
func (p *TextPrinter) newline() {
	if p.liveMode() {
		if p.pending == "" {
			return
		}
		s := p.pending
		p.pending = ""
		if strings.TrimSpace(ansiCodes.ReplaceAllString(s, "")) != "" {
			s += "\n"
		}
		p.emit(s)
		return
	}
	if p.midLine {
		io.WriteString(p.out, "\n")
		p.midLine = false
	}
}

// line writes a whole line, on a line of its own.
func (p *TextPrinter) line(s string) {
	p.reasoning = false
	p.newline()
	if p.liveMode() {
		p.emit(s + "\n")
		return
	}
	io.WriteString(p.out, s+"\n")
}

// spinner shows "⠋ thinking 1.2s" on a TTY while the model is silent.
type spinner struct {
	stop chan struct{}
	done chan struct{}
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// startSpinner starts the spinner; p.mu is held. (In live mode the
// status row of the live area is the spinner.)
func (p *TextPrinter) startSpinner() {
	if !p.opts.TTY || p.spin != nil || p.liveMode() {
		return
	}
	p.newline()
	s := &spinner{stop: make(chan struct{}), done: make(chan struct{})}
	p.spin = s
	start := p.opts.Now()
	go func() {
		defer close(s.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			p.mu.Lock()
			select {
			case <-s.stop:
				p.mu.Unlock()
				return
			default:
			}
			fmt.Fprintf(p.out, "\r\033[K%s %s", spinFrames[i%len(spinFrames)], p.style(ansiDim, "thinking "+formatDuration(p.opts.Now().Sub(start))))
			p.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// stopSpinner stops the spinner and clears its line; p.mu is held.
func (p *TextPrinter) stopSpinner() {
	if p.spin == nil {
		return
	}
	close(p.spin.stop)
	p.spin = nil
	io.WriteString(p.out, "\r\033[K")
}

// Brief is the one-line summary of a result shown to the user: its brief,
// else the first line of its message, else of its output.
func Brief(r toolset.Result) string {
	for _, s := range []string{r.Brief, r.Message, r.OutputText()} {
		if s = oneLine(s, 100); s != "" {
			return s
		}
	}
	if r.IsError() {
		return "error"
	}
	return "done"
}

// oneLine is the first non-empty line of s, cut to max runes.
func oneLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max-1]) + "…"
	}
	return s
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// progressText is "3/10 message", "3 message" when the total is unknown.
func progressText(e loop.ToolProgress) string {
	text := strconv.FormatFloat(e.Progress, 'f', -1, 64)
	if e.Total > 0 {
		text += "/" + strconv.FormatFloat(e.Total, 'f', -1, 64)
	}
	if e.Message != "" {
		text += " " + e.Message
	}
	return text
}

// JSONPrinter writes the run's events as stream-json (package streamjson).
type JSONPrinter struct {
	w *streamjson.Writer
}

// NewJSONPrinter returns a JSONPrinter writing to out.
func NewJSONPrinter(out io.Writer) *JSONPrinter {
	return &JSONPrinter{w: streamjson.NewWriter(out)}
}

// Pause does nothing: there is no transient output.
func (p *JSONPrinter) Pause() {}

// Start writes the session event.
func (p *JSONPrinter) Start(info Info) {
	tools := info.Tools
	if tools == nil {
		tools = []string{}
	}
	_ = p.w.Write(streamjson.SessionEvent{Type: "session", SessionID: info.SessionID, StateDir: info.StateDir, Agent: info.Agent,
		Provider: info.Provider, Model: info.Model, Tools: tools})
}

// Observe writes one event.
func (p *JSONPrinter) Observe(e loop.Event) {
	if v := streamjson.FromLoop(e); v != nil {
		_ = p.w.Write(v)
	}
}

// Result writes the result event that closes a one-shot run.
func (p *JSONPrinter) Result(r streamjson.ResultEvent) {
	r.Type = "result"
	_ = p.w.Write(r)
}
