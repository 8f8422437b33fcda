//go:build unix

package pluginsdk

import (
	"os"
	"syscall"
	"time"
)

// watchParent ends the plugin, and everything in its process group, when the
// host that started it is gone (even killed with SIGKILL, where the host
// cannot clean up and Pdeathsig is not available).
func watchParent() {
	ppid := os.Getppid()
	if ppid <= 1 {
		return
	}
	go func() {
		for range time.Tick(250 * time.Millisecond) {
			if os.Getppid() != ppid {
				if pgid := syscall.Getpgrp(); pgid == os.Getpid() {
					_ = syscall.Kill(-pgid, syscall.SIGKILL)
				}
				os.Exit(1)
			}
		}
	}()
}
