package repl

import (
	"bytes"
	"context"
)

// KeyReader reads single key presses, for the approval prompt: a question
// that must not be answered by accident.
type KeyReader interface {
	// ReadKey discards the input that arrived so far (typed ahead while
	// the agent worked), then shows legend (one line) and returns the next
	// key pressed on its own. Pasted text is never a key: a bracketed
	// paste, or several characters arriving at once, is dropped, and
	// ignored (a line to show) is shown. It returns ErrInterrupt on
	// Ctrl-C, io.EOF at the end of input and ctx.Err() when ctx ends.
	ReadKey(ctx context.Context, legend, ignored string) (rune, error)
}

// The terminal's bracketed paste mode: pastes arrive between pasteStart
// and pasteEnd.
const (
	bracketedPasteOn  = "\x1b[?2004h"
	bracketedPasteOff = "\x1b[?2004l"
)

var (
	pasteStart = []byte("\x1b[200~")
	pasteEnd   = []byte("\x1b[201~")
)

// keyParser splits terminal input into keys and pastes.
type keyParser struct {
	pending []byte // a chunk that may be the start of a paste marker
	inPaste bool
}

// feed takes the bytes of one read. It returns a key pressed on its own
// (ok), and whether pasted or bulk input was dropped. Escape sequences
// (arrows, function keys) are not keys; a lone Escape is returned as 0x1b.
func (p *keyParser) feed(b []byte) (key rune, ok, dropped bool) {
	b = append(p.pending, b...)
	p.pending = nil
	for len(b) > 0 {
		if p.inPaste {
			i := bytes.Index(b, pasteEnd)
			if i < 0 {
				p.pending = keepPrefix(b, pasteEnd)
				return 0, false, true
			}
			p.inPaste = false
			dropped = true
			b = b[i+len(pasteEnd):]
			continue
		}
		if i := bytes.Index(b, pasteStart); i >= 0 {
			if i > 0 {
				dropped = true // typed together with a paste: not a key
			}
			p.inPaste = true
			b = b[i+len(pasteStart):]
			continue
		}
		if tail := keepPrefix(b, pasteStart); len(tail) > 0 && len(tail) < len(b) || len(tail) > 1 {
			p.pending = tail
			b = b[:len(b)-len(tail)]
			if len(b) == 0 {
				return 0, false, dropped
			}
		}
		if dropped {
			return 0, false, true
		}
		if len(b) == 1 {
			return rune(b[0]), true, false
		}
		if b[0] == 0x1b {
			return 0, false, false // an escape sequence: a cursor or function key
		}
		return 0, false, true // several characters at once: pasted or typed ahead
	}
	return 0, false, dropped
}

// keepPrefix is the end of b that is a proper prefix of marker (to be
// completed by the next read), or nil.
func keepPrefix(b, marker []byte) []byte {
	for n := min(len(marker)-1, len(b)); n > 0; n-- {
		if bytes.Equal(b[len(b)-n:], marker[:n]) {
			return append([]byte(nil), b[len(b)-n:]...)
		}
	}
	return nil
}
