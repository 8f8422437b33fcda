//go:build unix

package file

import (
	"syscall"
)

// readWhole reads the regular file at path into buf (grown as needed) when
// it is at most limit bytes long; whole is false for a larger file, which
// is left unread. It uses bare system calls: a search opens thousands of
// files, and *os.File's bookkeeping (poller check, finalizer) shows there.
func readWhole(path string, buf []byte, limit int) (data []byte, whole bool, err error) {
	var fd int
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return buf[:0], false, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return buf[:0], false, err
	}
	if st.Size > int64(limit) {
		return buf[:0], false, nil
	}
	// Room for one byte more than the size: a file that reads short of its
	// size (it shrank) ends with the read that returns 0.
	want := int(st.Size) + 1
	if cap(buf) < want {
		buf = make([]byte, 0, want+want/8)
	}
	data = buf[:0]
	for {
		if len(data) == cap(data) {
			if len(data) > limit {
				return data, false, nil
			}
			grown := make([]byte, len(data), 2*cap(data)+4096)
			copy(grown, data)
			data = grown
		}
		n, err := syscall.Read(fd, data[len(data):cap(data)])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return data, false, err
		}
		if n == 0 {
			return data, true, nil
		}
		data = data[:len(data)+n]
		if int64(len(data)) == st.Size {
			// The size fstat reported: taken as the end of the file, without
			// one more read (a system call per file) to confirm it.
			return data, true, nil
		}
	}
}
