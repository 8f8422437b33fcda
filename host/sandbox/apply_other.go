//go:build !linux

package sandbox

import "fmt"

// ABI is the kernel's Landlock ABI version: 0, Landlock is Linux only.
func ABI() int { return 0 }

// Exec fails: Landlock is Linux only.
func Exec(p Policy, argv []string, env []string) error {
	return fmt.Errorf("sandbox of plugin %s: Landlock is Linux only", p.Plugin)
}

// Restrict fails: Landlock is Linux only.
func Restrict(p Policy) error {
	return fmt.Errorf("sandbox of plugin %s: Landlock is Linux only", p.Plugin)
}
