//go:build linux

package plugin_test

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sleepers lists the live processes whose command line is exactly
// `sleep SECONDS`.
func sleepers(seconds int) []int {
	want := []byte("sleep\x00" + strconv.Itoa(seconds) + "\x00")
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Equal(b, want) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			s := string(st)
			if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 0 && f[0] != "Z" {
				out = append(out, pid)
			}
		}
	}
	return out
}

func killSleepers(t *testing.T, seconds ...int) {
	t.Cleanup(func() {
		for _, s := range seconds {
			for _, pid := range sleepers(s) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// gone waits at most limit for no `sleep SECONDS` to be left.
func gone(t *testing.T, seconds int, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for len(sleepers(seconds)) > 0 {
		if time.Since(start) > limit {
			t.Fatalf("sleep %d still runs %s later: %v", seconds, limit, sleepers(seconds))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestRestartLeavesNoOrphans: when a plugin stops (here it crashes, with
// no chance to clean up) and is restarted, what the old process left
// running is gone within 2 s: a process group its tool tracked, and a job a
// Shell command left in the background; the restarted plugin serves again.
func TestRestartLeavesNoOrphans(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	sh := build(t, "plugins/shell/cmd/kosong-plugin-shell")
	const tracked, bg, after = 987101, 781101, 987102
	killSleepers(t, tracked, bg, after)
	ts, l := load(t, spec(cc, "Spawn", "Crash"), spec(sh))

	if r := call(t, ts, "Spawn", fmt.Sprintf(`{"seconds": %d}`, tracked)); r.Runtime {
		t.Fatalf("spawn: %+v", r)
	}
	if r := call(t, ts, "Shell", fmt.Sprintf(`{"command": "sleep %d >/dev/null 2>&1 &"}`, bg)); r.Runtime {
		t.Fatalf("shell: %+v", r)
	}
	// The background job may still be a shell about to exec sleep.
	for start := time.Now(); len(sleepers(tracked)) != 1 || len(sleepers(bg)) != 1; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > bound {
			t.Fatalf("tracked %v, background %v: want one of each running", sleepers(tracked), sleepers(bg))
		}
	}

	// The capcheck plugin crashes: its tracked group goes with it.
	if r := call(t, ts, "Crash", `{}`); !r.Runtime {
		t.Fatalf("crash: %+v", r)
	}
	took := gone(t, tracked, 2*time.Second)
	if r := call(t, ts, "Spawn", fmt.Sprintf(`{"seconds": %d}`, after)); r.Runtime {
		t.Fatalf("spawn after the restart: %+v", r)
	}
	if len(sleepers(after)) != 1 {
		t.Fatalf("the restarted plugin's sleep is not running")
	}
	t.Logf("tracked group gone %s after the crash", took)

	// The shell plugin is killed (as the supervisor kills one that hangs):
	// the command's background job goes with it; the next call restarts it.
	var shell int
	for _, p := range l.Plugins {
		if strings.Contains(p.Name(), "shell") {
			shell = p.Current().Pid()
		}
	}
	if shell == 0 {
		t.Fatal("no shell plugin")
	}
	syscall.Kill(shell, syscall.SIGKILL)
	took = gone(t, bg, 2*time.Second)
	if r := call(t, ts, "Shell", `{"command": "echo again"}`); r.Runtime || !strings.Contains(fmt.Sprint(r.Output), "again") {
		t.Fatalf("shell after the restart: %+v", r)
	}
	t.Logf("background job gone %s after the shell plugin was killed", took)
}
