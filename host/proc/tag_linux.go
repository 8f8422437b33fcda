//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// KillTagged kills (SIGKILL) every process whose environment carries tag:
// what a child left running, its process groups included, even after the
// child itself is gone. It scans /proc until a pass finds none (a process
// may fork while it is being killed), at most a few times, and returns how
// many it killed. A process that replaced its environment, or that this
// process may not inspect (another user's), is not found.
func KillTagged(tag string) int {
	if tag == "" {
		return 0
	}
	needle := []byte("\x00" + TagVar(tag) + "\x00")
	self := os.Getpid()
	killed := map[int]bool{}
	for pass := 0; pass < 5; pass++ {
		n := 0
		for _, pid := range taggedPids(needle, self) {
			// A killed process may still be on its way out on the next pass.
			if !killed[pid] && syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed[pid] = true
				n++
			}
		}
		if n == 0 {
			break
		}
	}
	return len(killed)
}

func taggedPids(needle []byte, self int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var out []int
	buf := make([]byte, 1, 64<<10)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + name + "/environ")
		if err != nil || len(env) == 0 {
			continue
		}
		// A leading NUL lets the first entry match like the others.
		buf = append(append(buf[:1], env...), 0)
		if bytes.Contains(buf, needle) {
			out = append(out, pid)
		}
	}
	return out
}
