//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

func filterArchs() (filterArch, bool) {
	return filterArch{
		native: unix.AUDIT_ARCH_X86_64, compat: unix.AUDIT_ARCH_I386, x32: 0x40000000,
		socket: unix.SYS_SOCKET, ioURing: unix.SYS_IO_URING_SETUP,
		// i386: socketcall, socket, io_uring_setup.
		compatDenied: []uint32{102, 359, 425},
	}, true
}
