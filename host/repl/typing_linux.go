package repl

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// typingIdle is how long the terminal stays silent before an Escape read
// on its own counts as the Escape key (not the start of a sequence).
const typingIdle = 50 * time.Millisecond

// watchTurn reads the keys typed while a turn runs and hands them to t,
// until stop is called. The terminal reads keys one at a time without
// echo or signals (Ctrl-C and Ctrl-S arrive as keys) and keeps its output
// processing, so the printer's lines end as usual; stop restores it.
// While a question is asked (hold) it reads nothing.
func (k *terminalKeys) watchTurn(t *typing) (stop func()) {
	fd := int(k.in.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil
	}
	mode := *old
	mode.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG | unix.IEXTEN
	mode.Iflag &^= unix.IXON | unix.ICRNL
	mode.Cc[unix.VMIN], mode.Cc[unix.VTIME] = 1, 0
	if unix.IoctlSetTermios(fd, unix.TCSETS, &mode) != nil {
		return nil
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			select {
			case <-quit:
				return
			default:
			}
			n, held, err := k.readSome(fd, buf)
			switch {
			case held:
				time.Sleep(typingIdle)
			case err != nil:
				return
			case n == 0:
				t.idle()
			default:
				t.feed(buf[:n])
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-done
			_ = unix.IoctlSetTermios(fd, unix.TCSETS, old)
		})
	}
}

// readSome waits up to typingIdle for input on fd and reads it (0: none);
// held: a question is being asked, nothing was read. k.reading is held
// meanwhile, so a question waits for a read under way to end.
func (k *terminalKeys) readSome(fd int, buf []byte) (n int, held bool, err error) {
	k.reading.Lock()
	defer k.reading.Unlock()
	if k.held.Load() > 0 {
		return 0, true, nil
	}
	n, err = k.pollRead(fd, buf)
	return n, false, err
}

func (k *terminalKeys) pollRead(fd int, buf []byte) (int, error) {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(typingIdle/time.Millisecond))
	if errors.Is(err, unix.EINTR) || n == 0 {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) == 0 {
		return 0, nil
	}
	n, err = unix.Read(fd, buf)
	if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
		return 0, nil
	}
	if err == nil && n == 0 {
		return 0, errors.New("end of input")
	}
	return n, err
}
