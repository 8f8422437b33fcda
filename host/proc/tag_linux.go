//go:build linux

package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// TaggedCPU is the CPU time (user and system) the processes carrying tag
// have used so far; ok is false where it cannot be measured. A process
// that has ended no longer counts.
func TaggedCPU(tag string) (cpu time.Duration, ok bool) {
	if tag == "" {
		return 0, true
	}
	for _, pid := range taggedPids([]byte("\x00"+TagVar(tag)+"\x00"), os.Getpid()) {
		cpu += processCPU(pid)
	}
	return cpu, true
}

// clockTicks is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const clockTicks = 100

// processCPU is the user and system time of pid, from /proc/PID/stat; 0
// when it cannot be read.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}
