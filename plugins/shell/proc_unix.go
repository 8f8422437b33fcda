//go:build unix

package shell

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// startInOwnGroup makes cmd the leader of a new process group, so that the
// whole group (the shell and everything it spawned) can be killed at once.
func startInOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills cmd's process group with SIGKILL, children included.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// groupEmpty reports whether no process is left in process group pgid.
func groupEmpty(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}
