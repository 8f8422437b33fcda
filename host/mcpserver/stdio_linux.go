package mcpserver

import (
	"os"
	"strconv"
	"syscall"
)

// pollable returns f opened again, non-blocking, when it is a pipe: reads
// and writes of the copy wait in the runtime's network poller, where those
// of a blocking descriptor hold a thread in a system call (and keep the
// runtime's monitor thread waking up to look at it). The pipe is opened
// afresh through /proc, so the mode of the descriptor the process shares
// with its children (the plugins inherit stdin) is left as it is. Anything
// else, or a failure, returns f.
func pollable(f *os.File, flag int) *os.File {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	var st syscall.Stat_t
	var fd uintptr
	if err := rc.Control(func(d uintptr) {
		fd = d
		err = syscall.Fstat(int(d), &st)
	}); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return f
	}
	p, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(fd)), flag|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return f
	}
	return p
}
