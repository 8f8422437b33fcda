//go:build windows

package launcher

import "os/exec"

// isolate has no process groups to set on Windows.
func isolate(*exec.Cmd) {}

// killGroup: go-plugin's Kill ends the plugin process itself.
func killGroup(int) {}
