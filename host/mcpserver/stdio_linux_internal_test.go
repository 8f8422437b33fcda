//go:build linux

package mcpserver

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// nonblocking reports whether f's descriptor is in non-blocking mode.
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags uintptr
	if err := rc.Control(func(fd uintptr) {
		flags, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	}); err != nil {
		t.Fatal(err)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// TestPollable: a pipe's end is opened again, non-blocking, and carries
// the pipe's data, while the original descriptor keeps its mode; a
// regular file is returned as it is.
func TestPollable(t *testing.T) {
	// A blocking pipe, as a parent process gives its child's stdin and
	// stdout (os.Pipe's are non-blocking already).
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	regular, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { regular.Close() })

	tests := []struct {
		name   string
		f      *os.File
		flag   int
		reopen bool
	}{
		{"the read end of a pipe", r, os.O_RDONLY, true},
		{"the write end of a pipe", w, os.O_WRONLY, true},
		{"a regular file", regular, os.O_WRONLY, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pollable(tt.f, tt.flag)
			if (p != tt.f) != tt.reopen {
				t.Fatalf("opened again: %v, want %v", p != tt.f, tt.reopen)
			}
			if !tt.reopen {
				return
			}
			t.Cleanup(func() { p.Close() })
			if !nonblocking(t, p) || nonblocking(t, tt.f) {
				t.Fatalf("non-blocking: the copy %v, the original %v; want true, false", nonblocking(t, p), nonblocking(t, tt.f))
			}
		})
	}

	// Data flows through the copies, and closing the read copy ends a read
	// waiting on it.
	pr, pw := pollable(r, os.O_RDONLY), pollable(w, os.O_WRONLY)
	t.Cleanup(func() { pw.Close() })
	if _, err := pw.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := pr.Read(buf); err != nil || string(buf[:n]) != "hello\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := pr.Read(buf)
		done <- err
	}()
	pr.Close()
	select {
	case err := <-done:
		if err == nil || err == io.EOF {
			t.Fatalf("a read ended by Close returned %v, want the closed file's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not end the waiting read")
	}
}
