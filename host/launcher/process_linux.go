//go:build linux

package launcher

import "syscall"

// setDeathSignal makes the kernel kill the plugin when the host dies, even
// by SIGKILL.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
