//go:build !linux

package proc

// runningExecutable: without /proc/self/exe, the host runs itself by path.
func runningExecutable() string { return "" }
