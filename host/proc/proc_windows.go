//go:build windows

package proc

import "os/exec"

// Isolate has no process groups to set on Windows.
func Isolate(*exec.Cmd) {}

// KillGroup: on Windows the child is ended by killing its process.
func KillGroup(int) {}

// Alive cannot tell on Windows without a handle: it says yes.
func Alive(pid int) bool { return pid > 0 }
