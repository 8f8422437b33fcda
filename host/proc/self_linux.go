//go:build linux

package proc

import "os"

// selfLink names, in any process, the file it was executed from.
const selfLink = "/proc/self/exe"

// runningExecutable is selfLink when /proc is mounted.
func runningExecutable() string {
	if _, err := os.Stat(selfLink); err != nil {
		return ""
	}
	return selfLink
}
