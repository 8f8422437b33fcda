//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// Isolate puts a child (a plugin, an MCP server) in its own process group,
// so the terminal's Ctrl-C does not reach it and the host can kill it with
// everything it started; on Linux it also dies with the host.
func Isolate(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
}

// KillGroup kills the process group led by pid.
func KillGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// Alive reports whether process pid is still running: not gone, and on
// Linux not a zombie waiting to be reaped (a dead child of ours).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if state, ok := procState(pid); ok {
		return state != 'Z' && state != 'X'
	}
	return syscall.Kill(pid, 0) == nil
}
