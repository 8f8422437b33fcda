//go:build linux

package proc

import "syscall"

// setDeathSignal makes the kernel send SIGTERM to the plugin when the host
// dies, even by SIGKILL; the SDK then kills what its tools started and exits.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGTERM }
