//go:build !linux

package mcpserver

import "os"

// pollable returns f: opening a pipe again is Linux's.
func pollable(f *os.File, _ int) *os.File { return f }
