//go:build !unix

package shell

import "os"

// terminateGroup ends the task's shell; outside unix there are no groups.
func terminateGroup(pid int) { killTaskGroup(pid) }

// killTaskGroup kills the task's shell.
func killTaskGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
