//go:build unix

package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procUsage is what a process tree has used (from /proc: nothing where
// there is none): CPU time (user and system,
// in clock ticks of 10 ms) and context switches of all its threads.
type procUsage struct {
	ticks    int64
	switches int64
}

func (u procUsage) sub(v procUsage) procUsage {
	return procUsage{u.ticks - v.ticks, u.switches - v.switches}
}

// treeUsage sums the usage of pid and its descendants now alive.
func treeUsage(pid int) procUsage {
	var u procUsage
	if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
			if len(f) > 12 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				u.ticks = ut + st
			}
		}
	}
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "status"))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				u.switches += n
			}
		}
	}
	for _, c := range childPIDs(pid) {
		cu := treeUsage(c)
		u.ticks += cu.ticks
		u.switches += cu.switches
	}
	return u
}

// childPIDs lists the children of pid.
func childPIDs(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// childServer finds the child of this process whose command line or
// environment holds marker.
func childServer(marker string) int {
	for _, c := range childPIDs(os.Getpid()) {
		for _, f := range []string{"cmdline", "environ"} {
			b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c), f))
			if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
				return c
			}
		}
	}
	return 0
}
