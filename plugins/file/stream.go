package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// Editing streams the file: memory stays within a few buffers of streamChunk
// bytes plus the edit's own text, whatever the file's size (see the memory
// bound in docs/safety-and-failure.md and BenchmarkBigEdit).
const (
	streamChunk = 1 << 20
	// maxTrackedChanges is how many changed places of an edit are kept
	// for its diff; the diff shows fewer, and says when there were more.
	maxTrackedChanges = 1000
)

// replaceStream copies r to w, replacing every occurrence of old with repl,
// left to right without overlaps (as strings.ReplaceAll); a nil w only
// counts. onMatch, if not nil, gets the offset in r of each occurrence. It
// returns the number of occurrences and whether r has a "\r\n".
func replaceStream(ctx context.Context, r io.Reader, w io.Writer, old, repl []byte, onMatch func(int64)) (n int, crlf bool, err error) {
	buf := make([]byte, 0, streamChunk+len(old))
	base := int64(0) // r's offset of buf[0]
	var last byte    // the byte read before the current chunk
	eof := false
	emit := func(b []byte) error {
		if w == nil || len(b) == 0 {
			return nil
		}
		_, err := w.Write(b)
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return n, crlf, err
		}
		for !eof && len(buf) < cap(buf) {
			k, err := r.Read(buf[len(buf):cap(buf)])
			if k > 0 {
				chunk := buf[len(buf) : len(buf)+k]
				if !crlf {
					crlf = last == '\r' && chunk[0] == '\n' || bytes.Contains(chunk, []byte("\r\n"))
				}
				last = chunk[k-1]
				buf = buf[:len(buf)+k]
			}
			if errors.Is(err, io.EOF) {
				eof = true
			} else if err != nil {
				return n, crlf, err
			}
		}
		i := 0
		for {
			j := bytes.Index(buf[i:], old)
			if j < 0 {
				break
			}
			if err := emit(buf[i : i+j]); err != nil {
				return n, crlf, err
			}
			if err := emit(repl); err != nil {
				return n, crlf, err
			}
			if onMatch != nil {
				onMatch(base + int64(i+j))
			}
			n++
			i += j + len(old)
		}
		if eof {
			return n, crlf, emit(buf[i:])
		}
		// Keep what could start an occurrence that the next read completes.
		keep := max(i, len(buf)-len(old)+1)
		if err := emit(buf[i:keep]); err != nil {
			return n, crlf, err
		}
		rest := copy(buf, buf[keep:])
		buf = buf[:rest]
		base += int64(keep)
	}
}

// composer follows an edit's changed places through successive passes: it
// takes the places changed so far (old file -> current file) and the
// occurrences one pass replaces (current -> next), and gives the places
// changed from the old file to the next one, overlapping ones merged. It
// keeps the first maxTrackedChanges of them.
type composer struct {
	prev       []pluginsdk.DiffChange
	pi         int
	limit      int64 // past it (in current offsets) the places are no longer known
	oldLen     int64 // of a replaced occurrence
	newLen     int64 // of its replacement
	out        []pluginsdk.DiffChange
	more       bool
	shiftOld   int64 // current offset minus old offset, before the open group
	shiftNew   int64 // next offset minus current offset, before the open group
	open       bool
	gs, ge     int64 // the open group, in current offsets
	gOld, gNew int64 // the open group's own shifts
}

func newComposer(prev []pluginsdk.DiffChange, more bool, oldLen, newLen int) *composer {
	c := &composer{prev: prev, more: more, limit: 1<<63 - 1, oldLen: int64(oldLen), newLen: int64(newLen)}
	if more && len(prev) > 0 {
		c.limit = prev[len(prev)-1].NewEnd
	}
	return c
}

// match takes an occurrence at off (current offsets; in order).
func (c *composer) match(off int64) {
	for c.pi < len(c.prev) && c.prev[c.pi].NewOff <= off {
		c.takePrev()
	}
	c.item(off, off+c.oldLen, 0, c.newLen-c.oldLen)
}

func (c *composer) takePrev() {
	r := c.prev[c.pi]
	c.pi++
	c.item(r.NewOff, r.NewEnd, (r.NewEnd-r.NewOff)-(r.OldEnd-r.OldOff), 0)
}

func (c *composer) item(start, end, dOld, dNew int64) {
	if start > c.limit {
		c.more = true
		return
	}
	if c.open && start <= c.ge {
		c.ge = max(c.ge, end)
		c.gOld += dOld
		c.gNew += dNew
		return
	}
	c.close()
	c.open, c.gs, c.ge, c.gOld, c.gNew = true, start, end, dOld, dNew
}

func (c *composer) close() {
	if !c.open {
		return
	}
	if len(c.out) < maxTrackedChanges {
		c.out = append(c.out, pluginsdk.DiffChange{
			OldOff: c.gs - c.shiftOld, OldEnd: c.ge - c.shiftOld - c.gOld,
			NewOff: c.gs + c.shiftNew, NewEnd: c.ge + c.shiftNew + c.gNew,
		})
	} else {
		c.more = true
	}
	c.shiftOld += c.gOld
	c.shiftNew += c.gNew
	c.open = false
}

// finish returns the changed places from the old file to the next one, and
// whether there are more than those.
func (c *composer) finish() ([]pluginsdk.DiffChange, bool) {
	for c.pi < len(c.prev) {
		c.takePrev()
	}
	c.close()
	return c.out, c.more
}

// sameBytes reports whether a[aOff:aOff+n] equals b[bOff:bOff+n], reading
// both in windows.
func sameBytes(a, b io.ReaderAt, aOff, bOff, n int64) (bool, error) {
	const window = 64 << 10
	x, y := make([]byte, window), make([]byte, window)
	for done := int64(0); done < n; {
		k := min(window, n-done)
		if _, err := a.ReadAt(x[:k], aOff+done); err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		if _, err := b.ReadAt(y[:k], bOff+done); err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		if !bytes.Equal(x[:k], y[:k]) {
			return false, nil
		}
		done += k
	}
	return true, nil
}

// unchanged reports whether the edit from old to new changed nothing: the
// changed places read the same on both sides (everything, when not every
// place is known).
func unchanged(old, new *os.File, oldSize, newSize int64, changes []pluginsdk.DiffChange, more bool) (bool, error) {
	if oldSize != newSize {
		return false, nil
	}
	if more {
		return sameBytes(old, new, 0, 0, oldSize)
	}
	for _, ch := range changes {
		if ch.OldEnd-ch.OldOff != ch.NewEnd-ch.NewOff {
			return false, nil
		}
		if same, err := sameBytes(old, new, ch.OldOff, ch.NewOff, ch.OldEnd-ch.OldOff); err != nil || !same {
			return false, err
		}
	}
	return true, nil
}

// newBufferedWriter buffers the many small writes of a pass with many
// occurrences.
func newBufferedWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, streamChunk) }
