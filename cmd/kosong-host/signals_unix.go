//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// hangUpAsTerminate makes SIGHUP (the terminal went away) end the host as
// SIGTERM does: the command cancels its work and closes its plugins and MCP
// servers, so nothing they started outlives the host.
func hangUpAsTerminate() {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		}
	}()
}
