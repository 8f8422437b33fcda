package repl

import "golang.org/x/sys/unix"

// keepCarriageReturn stops the terminal on fd from turning CR into LF on
// input (ICRNL) while the session runs, so an Enter typed ahead while the
// agent works still submits (LF, Ctrl-J, inserts a newline). It returns
// the function that restores the setting.
func keepCarriageReturn(fd int) (restore func()) {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil || t.Iflag&unix.ICRNL == 0 {
		return func() {}
	}
	old := *t
	t.Iflag &^= unix.ICRNL
	if unix.IoctlSetTermios(fd, unix.TCSETS, t) != nil {
		return func() {}
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, &old) }
}
