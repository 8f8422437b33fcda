//go:build !unix

package shell

import "os/exec"

// startInOwnGroup has no process groups to set up outside unix.
func startInOwnGroup(*exec.Cmd) {}

// killGroup kills the shell process; outside unix its children may survive.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// groupEmpty: without process groups nothing is left to track.
func groupEmpty(int) bool { return true }
