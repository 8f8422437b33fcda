//go:build !linux

package proc

import "time"

// KillTagged finds tagged processes through /proc, which only Linux has;
// elsewhere it kills nothing (process groups and the SDK's parent watch
// remain).
func KillTagged(string) int { return 0 }

// TaggedCPU cannot be measured without /proc: ok is false.
func TaggedCPU(string) (time.Duration, bool) { return 0, false }
