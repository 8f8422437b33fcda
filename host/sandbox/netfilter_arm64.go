//go:build linux && arm64

package sandbox

import "golang.org/x/sys/unix"

func filterArchs() (filterArch, bool) {
	return filterArch{
		native: unix.AUDIT_ARCH_AARCH64, compat: unix.AUDIT_ARCH_ARM,
		socket: unix.SYS_SOCKET, ioURing: unix.SYS_IO_URING_SETUP,
		// arm: socketcall, socket, io_uring_setup.
		compatDenied: []uint32{102, 281, 425},
	}, true
}
