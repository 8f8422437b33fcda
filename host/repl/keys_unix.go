//go:build unix

package repl

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// terminalKeys reads keys from a terminal in raw mode.
type terminalKeys struct {
	in  *os.File
	out io.Writer

	// While a turn runs, watchTurn reads the keys typed (typing_linux.go);
	// a question holds it off.
	held    atomic.Int32
	reading sync.Mutex
}

// NewKeys returns the KeyReader of the terminal in: it switches the
// terminal to raw mode and turns bracketed paste on (written to out) while
// it reads.
func NewKeys(in *os.File, out io.Writer) KeyReader {
	return &terminalKeys{in: in, out: out}
}

// pollEvery bounds how long a read waits before looking at ctx again.
const pollEvery = 100 * time.Millisecond

func (k *terminalKeys) ReadKey(ctx context.Context, legend, ignored string) (rune, error) {
	defer k.hold()() // the keys typed during a turn are not read meanwhile
	fd := int(k.in.Fd())
	state, err := term.MakeRaw(fd)
	if err != nil {
		return 0, err
	}
	defer term.Restore(fd, state)
	io.WriteString(k.out, bracketedPasteOn) // and left on: the session turns it off
	discardInput(fd)
	// The terminal is raw: a line ends with CR LF.
	if legend != "" {
		io.WriteString(k.out, legend+"\r\n")
	}

	var p keyParser
	buf := make([]byte, 4096)
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(pollEvery/time.Millisecond))
		if errors.Is(err, unix.EINTR) || n == 0 {
			continue
		}
		if err != nil {
			return 0, err
		}
		if fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) == 0 {
			continue
		}
		n, err = unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		key, ok, dropped := p.feed(buf[:n])
		if dropped && ignored != "" {
			io.WriteString(k.out, ignored+"\r\n")
		}
		if ok {
			switch key {
			case 3: // Ctrl-C
				return 0, ErrInterrupt
			case 4: // Ctrl-D
				return 0, io.EOF
			}
			return key, nil
		}
	}
}

// discardInput drops the input waiting on fd: what was typed (or pasted)
// before the question was shown never answers it.
func discardInput(fd int) {
	buf := make([]byte, 4096)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err != nil || n == 0 || fds[0].Revents&unix.POLLIN == 0 {
			return
		}
		if n, err := unix.Read(fd, buf); err != nil || n == 0 {
			return
		}
	}
}

// hold stops watchTurn's reading until release is called (a question is
// being asked on the terminal).
func (k *terminalKeys) hold() (release func()) {
	k.held.Add(1)
	k.reading.Lock() // waits for a read under way to end
	k.reading.Unlock()
	var once sync.Once
	return func() { once.Do(func() { k.held.Add(-1) }) }
}
