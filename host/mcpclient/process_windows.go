//go:build windows

package mcpclient

import "os/exec"

// isolate has no process groups to set on Windows.
func isolate(*exec.Cmd) {}

// killGroup: the SDK's Close ends the server process itself.
func killGroup(int) {}
