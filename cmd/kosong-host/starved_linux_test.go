package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunAtAFifthOfACPU: a one-shot run of the default agent (every
// built-in plugin started at once) in a control group capped at 0.2 CPU
// finishes, with a start timeout of 2 s that the starts take far longer
// than: a starved machine makes plugin starts slow, never failed.
// It needs a control group this test may create (root, cgroup v1's cpu
// controller or cgroup v2 with cpu enabled); elsewhere it skips.
func TestRunAtAFifthOfACPU(t *testing.T) {
	procs := cappedGroup(t, 20000, 100000)
	work := writeFiles(t, map[string]string{"script.yaml": `turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "echo from-the-capped-run"}}]
  - text: "Done at a fifth of a CPU."
`})
	host := kosongHost(t)
	// The shell joins the group, then becomes kosong-host: everything the
	// run starts is in the group from its start.
	script := fmt.Sprintf("echo $$ > %q && exec %q \"$@\"", procs, host)
	r := runCommand(t, "sh", work, emptyEnv(t), "", "-c", script, "sh",
		"--trust", "--plugin-start-timeout", "2s", "run", "--yolo", "-p", "go", "--provider", "scripted", "--script", "script.yaml")
	if r.code != 0 || !strings.Contains(r.stdout, "Done at a fifth of a CPU.") {
		t.Fatalf("capped run: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// cappedGroup makes a control group capped at quota of every period (µs)
// and returns the file a process joins it by writing its pid; the group is
// removed at the end of the test.
func cappedGroup(t *testing.T, quota, period int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("capping the CPU needs a control group, which needs root")
	}
	name := fmt.Sprintf("kosong-host-test-%d", os.Getpid())
	var dir string
	var limits map[string]string
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil { // v2
		dir = filepath.Join("/sys/fs/cgroup", name)
		limits = map[string]string{"cpu.max": fmt.Sprintf("%d %d", quota, period)}
	} else {
		dir = filepath.Join("/sys/fs/cgroup/cpu", name)
		limits = map[string]string{"cpu.cfs_period_us": fmt.Sprint(period), "cpu.cfs_quota_us": fmt.Sprint(quota)}
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("no control group to cap the CPU with: %v", err)
	}
	t.Cleanup(func() {
		// The group is removed once its processes have ended.
		os.Remove(dir)
	})
	for file, v := range limits {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0o644); err != nil {
			t.Skipf("cannot cap the CPU in %s: %v", dir, err)
		}
	}
	return filepath.Join(dir, "cgroup.procs")
}
