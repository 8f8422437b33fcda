//go:build unix

package shell

import "syscall"

// terminateGroup asks a task's process group to end (SIGTERM).
func terminateGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGTERM) }

// killTaskGroup kills a task's process group (SIGKILL).
func killTaskGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
