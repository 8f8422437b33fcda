//go:build linux

package proc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// DroppedCaps are the capabilities a child never has, even when the host
// runs as root: those that read another process's memory or environment
// past the host's non-dumpable mark, or around it. Measured as root on
// Linux 6.18 against a non-dumpable root process, one capability at a
// time: /proc/PID/environ, maps and auxv open with CAP_SYS_PTRACE,
// CAP_SYS_ADMIN or CAP_PERFMON alone; /proc/PID/mem (and ptrace,
// process_vm_readv) with CAP_SYS_PTRACE; no other capability opens any of
// them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_CHECKPOINT_RESTORE
// included). Around the mark: CAP_SYS_RAWIO (/dev/mem, /proc/kcore),
// CAP_SYS_MODULE (kernel modules) and CAP_BPF (with CAP_PERFMON, probes
// that read any process's memory).
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

// LimitChildren takes DroppedCaps out of every program this process will
// execute, whoever starts it (a plugin through a launcher or not, an MCP
// server, a hook, whatever file is at the launcher's path by then): it
// drops them from the bounding set, the inheritable set and the ambient
// set of every thread of the process (psx: capabilities belong to a thread,
// and any thread may fork a child). The process keeps its own effective
// and permitted capabilities. Without CAP_SETPCAP (a normal user: nothing
// to drop) the bounding set stays as it is, and that is the error
// returned.
func LimitChildren() error {
	var errs []error
	for _, c := range DroppedCaps {
		if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, c, 0, 0, 0); err != nil || in != 1 {
			continue // not in the bounding set, or unknown to this kernel
		}
		if _, _, e := psx.Syscall3(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0); e != 0 {
			errs = append(errs, fmt.Errorf("capability %d: %w", c, e))
		}
		if set, _ := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, c, 0, 0); set == 1 {
			_, _, _ = psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_LOWER, c, 0, 0, 0)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return errors.Join(append(errs, err)...)
	}
	inh := [2]uint32{data[0].Inheritable, data[1].Inheritable}
	for _, c := range DroppedCaps {
		data[c/32].Inheritable &^= uint32(1) << (c % 32)
	}
	if inh != [2]uint32{data[0].Inheritable, data[1].Inheritable} {
		if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
			errs = append(errs, fmt.Errorf("inheritable set: %w", e))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("dropping capabilities for child processes: %w", errors.Join(errs...))
	}
	return nil
}

// DirectStart reports whether a program this process executes directly
// starts with no more capabilities than one started through the launcher
// (ExecUnprivileged): none of DroppedCaps is left in the bounding set
// that the launcher could drop (it can as root or with CAP_SETPCAP, as
// LimitChildren can) or, as root, would refuse to start with, nor in the
// inheritable or ambient sets. Once LimitChildren succeeded it is true, and
// so it is for a user without capabilities: the launcher's exec is then
// one exec too many.
func DirectStart() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	has := func(set func(unix.CapUserData) uint32, c uintptr) bool {
		return set(data[c/32])&(uint32(1)<<(c%32)) != 0
	}
	effective := func(d unix.CapUserData) uint32 { return d.Effective }
	inheritable := func(d unix.CapUserData) uint32 { return d.Inheritable }
	privileged := os.Geteuid() == 0 || has(effective, unix.CAP_SETPCAP)
	for _, c := range DroppedCaps {
		if has(inheritable, c) {
			return false
		}
		if set, _ := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, c, 0, 0); set == 1 {
			return false
		}
		if in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, c, 0, 0, 0); err == nil && in == 1 && privileged {
			return false
		}
	}
	return true
}
