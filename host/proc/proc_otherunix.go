//go:build unix && !linux

package proc

import "syscall"

// setDeathSignal: only Linux has a parent-death signal; elsewhere the SDK
// watches its parent instead.
func setDeathSignal(*syscall.SysProcAttr) {}

func procState(int) (byte, bool) { return 0, false }
