package mcpclient

import (
	"os"

	"golang.org/x/sys/unix"
)

// unreadBytes is how many bytes written to the pipe f are still unread
// (Linux answers FIONREAD on either end of a pipe); -1 if unknown.
func unreadBytes(f *os.File) int64 {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	if err := rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	}); err != nil {
		return -1
	}
	return int64(n)
}
