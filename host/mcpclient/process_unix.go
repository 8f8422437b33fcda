//go:build unix

package mcpclient

import (
	"os/exec"
	"syscall"
)

// isolate puts a stdio server in its own process group, so the terminal's
// Ctrl-C does not reach it and Close can kill it with everything it started.
func isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

// killGroup kills the server's process group.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}
