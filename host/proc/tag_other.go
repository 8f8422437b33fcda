//go:build !linux

package proc

// KillTagged finds tagged processes through /proc, which only Linux has;
// elsewhere it kills nothing (process groups and the SDK's parent watch
// remain).
func KillTagged(string) int { return 0 }
