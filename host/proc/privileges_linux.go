//go:build linux

package proc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// DroppedCaps are the capabilities a child never has, even when the host
// runs as root: those that read another process's memory or environment
// past the host's non-dumpable mark (ptrace, /proc/PID/mem and environ,
// process_vm_readv) or around it (raw I/O on /dev/mem and /proc/kcore,
// kernel modules, BPF and perf probes, CAP_SYS_ADMIN's share of those).
var DroppedCaps = []uintptr{
	unix.CAP_SYS_PTRACE, unix.CAP_SYS_RAWIO, unix.CAP_SYS_MODULE,
	unix.CAP_SYS_ADMIN, unix.CAP_BPF, unix.CAP_PERFMON,
}

// MarkUndumpable makes the host non-dumpable (prctl PR_SET_DUMPABLE 0):
// its /proc/PID/environ, mem and maps, and ptrace, are closed to every
// process without CAP_SYS_PTRACE, same-user ones included, and it leaves
// no core dump. Its children are dumpable again once they exec.
func MarkUndumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// ExecUnprivileged replaces this process with argv[0] (a path), started
// without DroppedCaps: they leave the bounding set (so neither the program
// nor anything it starts, setuid binaries included, can have them again)
// and the inheritable and ambient sets. It returns only on failure; it
// refuses to exec a root program that would keep CAP_SYS_PTRACE.
func ExecUnprivileged(argv, env []string) error {
	if len(argv) == 0 {
		return errors.New("no program to run")
	}
	if err := DropCaps(); err != nil {
		return err
	}
	path := argv[0]
	if !strings.ContainsRune(path, '/') {
		return fmt.Errorf("%s: want a path", path)
	}
	return unix.Exec(path, argv, env)
}

// DropCaps drops DroppedCaps from the calling thread, which it locks to
// its goroutine: the thread that then executes a program passes on what is
// left. As root, a CAP_SYS_PTRACE it cannot drop is an error.
func DropCaps() error {
	// Capabilities belong to a thread, and exec runs on the calling one.
	runtime.LockOSThread()
	var bset error
	for _, c := range DroppedCaps {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			bset = err
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err == nil {
		for _, c := range DroppedCaps {
			bit := uint32(1) << (c % 32)
			d := &data[c/32]
			d.Effective &^= bit
			d.Permitted &^= bit
			d.Inheritable &^= bit
		}
		_ = unix.Capset(&hdr, &data[0])
	}
	if bset != nil && os.Geteuid() == 0 {
		if in, _ := unix.PrctlRetInt(unix.PR_CAPBSET_READ, unix.CAP_SYS_PTRACE, 0, 0, 0); in == 1 {
			return fmt.Errorf("cannot drop CAP_SYS_PTRACE from the capability bounding set (%v): "+
				"a root plugin could read the host's memory; run kosong-host with CAP_SETPCAP or not as root", bset)
		}
	}
	return nil
}
