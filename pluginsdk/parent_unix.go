//go:build unix

package pluginsdk

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// watchParent ends the plugin, everything in its process group and the
// groups registered with TrackProcessGroup, when the host that started it is
// gone (even killed with SIGKILL, where the host
// cannot clean up and Pdeathsig is not available).
//
// On Linux the host asks the kernel to send SIGTERM to the plugin when the
// host dies (Pdeathsig); elsewhere, and as a fallback, the plugin polls its
// parent pid.
func watchParent() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		exitWithGroups()
	}()
	ppid := os.Getppid()
	if ppid <= 1 {
		return
	}
	go func() {
		for range time.Tick(250 * time.Millisecond) {
			if os.Getppid() != ppid {
				exitWithGroups()
			}
		}
	}()
}

func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// exitWithGroups kills the tracked process groups and the plugin's own group,
// then exits.
func exitWithGroups() {
	killTrackedGroups()
	if pgid := syscall.Getpgrp(); pgid == os.Getpid() {
		killGroup(pgid)
	}
	os.Exit(1)
}
