//go:build linux

package mcpclient

import "syscall"

// setDeathSignal makes the kernel send SIGTERM to the server when the host
// dies, even by SIGKILL.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGTERM }
