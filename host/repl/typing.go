package repl

import (
	"bytes"
	"strings"
	"sync"
	"unicode/utf8"
)

// Keys while a turn runs, on a terminal (see typing): the input line
// stays below the output and takes what is typed; nothing typed is echoed
// into the output.
const (
	keyInterrupt = 0x03 // Ctrl-C, and Esc: interrupt the turn
	keyEOF       = 0x04 // Ctrl-D: on an empty line, leave once no turn runs
	keyEsc       = 0x1b
	keySteer     = 0x13 // Ctrl-S: send the input line into the running turn
	keyShowLast  = 0x0f // Ctrl-O: show the whole output of the last tool call
	keyClearLine = 0x15 // Ctrl-U
	keyBackspace = 0x7f
	keyCtrlH     = 0x08
)

// typingHandlers are what typing calls; each runs on the reading goroutine.
type typingHandlers struct {
	// interrupt cancels the turn (Esc, Ctrl-C).
	interrupt func()
	// steer sends text into the running turn; false if the turn no longer
	// takes it.
	steer func(text string) bool
	// show shows the queued lines and the input line being typed.
	show func(queued []string, text string)
	// eof: Ctrl-D on an empty line.
	eof func()
	// complete lists the completions of the line (Tab); nil: none.
	complete func(line string) []string
	// showLast shows the whole output of the last tool call (Ctrl-O).
	showLast func()
}

// typing is the input line while a turn runs: the keys typed edit it,
// Enter queues it to be sent after the turn, Ctrl-S steers it into the
// turn, Esc or Ctrl-C interrupt. A bracketed paste is inserted as it is,
// newlines and all. Escape sequences (arrows, function keys) are ignored.
type typing struct {
	h typingHandlers

	mu      sync.Mutex
	text    []rune
	queued  []string
	pending []byte // an incomplete sequence, kept for the next read
	inPaste bool
	// queuedAtInterrupt is how many lines were queued when the turn was
	// interrupted (Esc, Ctrl-C); -1 when it was not.
	queuedAtInterrupt int
}

func newTyping(h typingHandlers) *typing {
	return &typing{h: h, queuedAtInterrupt: -1}
}

// turnStarted forgets an interrupt of an earlier turn.
func (t *typing) turnStarted() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queuedAtInterrupt = -1
}

// result is what was queued (Enter) and what is left on the input line.
func (t *typing) result() (queued []string, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.queued...), string(t.text)
}

// takeQueuedBeforeInterrupt returns the lines queued before the turn
// was interrupted with a key (all of them if it was interrupted
// otherwise) and forgets them; lines queued after the interrupt stay.
func (t *typing) takeQueuedBeforeInterrupt() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.queued)
	if t.queuedAtInterrupt >= 0 {
		n = min(n, t.queuedAtInterrupt)
	}
	q := append([]string(nil), t.queued[:n]...)
	t.queued = t.queued[n:]
	t.queuedAtInterrupt = -1
	return q
}

// feed takes the bytes of one read from the terminal.
func (t *typing) feed(b []byte) {
	t.mu.Lock()
	changed, interrupt, eof, showLast := t.parse(b)
	queued, text := append([]string(nil), t.queued...), string(t.text)
	t.mu.Unlock()
	if eof && t.h.eof != nil {
		t.h.eof()
	}
	if showLast && t.h.showLast != nil {
		t.h.showLast()
	}
	if changed && t.h.show != nil {
		t.h.show(queued, text)
	}
	if interrupt && t.h.interrupt != nil {
		t.h.interrupt()
	}
}

// idle is called when nothing more arrived for a while: an Escape still
// pending was pressed on its own.
func (t *typing) idle() {
	t.mu.Lock()
	esc := string(t.pending) == "\x1b" && !t.inPaste
	if esc {
		t.pending = nil
		if t.queuedAtInterrupt < 0 {
			t.queuedAtInterrupt = len(t.queued)
		}
	}
	t.mu.Unlock()
	if esc && t.h.interrupt != nil {
		t.h.interrupt()
	}
}

// parse applies b; t.mu is held. A steer is sent from here (t.mu held:
// the handler must not call back into t).
func (t *typing) parse(b []byte) (changed, interrupt, eof, showLast bool) {
	b = append(t.pending, b...)
	t.pending = nil
	for len(b) > 0 {
		if t.inPaste {
			i := bytes.Index(b, pasteEnd)
			if i < 0 {
				keep := keepPrefix(b, pasteEnd)
				t.insert(string(b[:len(b)-len(keep)]))
				t.pending = keep
				return true, interrupt, eof, showLast
			}
			t.insert(string(b[:i]))
			t.inPaste = false
			b = b[i+len(pasteEnd):]
			changed = true
			continue
		}
		switch c := b[0]; {
		case c == keyEsc:
			if bytes.HasPrefix(b, pasteStart) {
				t.inPaste = true
				b = b[len(pasteStart):]
				continue
			}
			n := escapeLen(b)
			if n == 0 { // a lone Escape so far, or a sequence cut short
				t.pending = append([]byte(nil), b...)
				return changed, interrupt, eof, showLast
			}
			b = b[n:]
			continue
		case c == keyInterrupt:
			interrupt = true
			if t.queuedAtInterrupt < 0 {
				t.queuedAtInterrupt = len(t.queued)
			}
		case c == keyEOF:
			eof = eof || len(t.text) == 0
		case c == keyShowLast:
			showLast = true
		case c == '\r':
			if len(t.text) > 0 {
				t.queued = append(t.queued, string(t.text))
				t.text = nil
				changed = true
			}
		case c == '\n': // Ctrl-J
			t.insert("\n")
			changed = true
		case c == keySteer:
			if s := string(t.text); strings.TrimSpace(s) != "" {
				if t.h.steer == nil || !t.h.steer(s) {
					t.queued = append(t.queued, s) // the turn is ending: it goes next
				}
				t.text = nil
				changed = true
			}
		case c == keyBackspace || c == keyCtrlH:
			if len(t.text) > 0 {
				t.text = t.text[:len(t.text)-1]
				changed = true
			}
		case c == keyClearLine:
			t.text, changed = nil, true
		case c == '\t':
			// Tab typed ahead (e.g. right after a command's output)
			// completes as the prompt would when there is one completion.
			if t.h.complete != nil {
				line := string(t.text)
				if cands := t.h.complete(line); len(cands) == 1 {
					t.text = []rune(line[:strings.LastIndexAny(line, " \t\n")+1] + cands[0])
					changed = true
				}
			}
		case c < 0x20:
			// other control keys do nothing here
		default:
			if !utf8.FullRune(b) {
				t.pending = append([]byte(nil), b...)
				return changed, interrupt, eof, showLast
			}
			r, n := utf8.DecodeRune(b)
			t.text = append(t.text, r)
			changed = true
			b = b[n:]
			continue
		}
		b = b[1:]
	}
	return changed, interrupt, eof, showLast
}

// insert adds pasted or typed text; a pasted line end (CR) is a newline.
func (t *typing) insert(s string) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	for _, r := range s {
		if r == '\n' || r == '\t' || r >= 0x20 {
			t.text = append(t.text, r)
		}
	}
}

// escapeLen is the length of the escape sequence at the start of b (an
// Escape), 0 if b may be cut short or is a lone Escape: CSI (ESC [ ...
// final), SS3 (ESC O x), or an Alt-key (ESC x).
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '[':
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				return i + 1
			}
		}
		return 0
	case 'O':
		if len(b) < 3 {
			return 0
		}
		return 3
	}
	return 2
}
