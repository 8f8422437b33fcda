//go:build linux

package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/declcache"
	"github.com/kosong-host/kosong-host/host/testbin"
)

// children lists the pids whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestNoOrphans: however the host ends, its plugins are gone, started
// with it or at their first call.
func TestNoOrphans(t *testing.T) {
	cc, err := testbin.Build("host/testdata/plugins/capcheck", "capcheck")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{
		"agent.yaml": fmt.Sprintf("version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [%q]\n", cc+":Sleep"),
		"s.md":       "",
	})
	// Lazy: the declaration is kept (a first listing), the plugin starts
	// at the call; eager: it starts with the host.
	cache := t.TempDir()
	if r := runHostEnv(t, dir, []string{declcache.CacheDirEnv + "=" + cache}, "", "tools", "list"); r.code != 0 {
		t.Fatalf("tools list: %d\n%s", r.code, r.stderr)
	}
	for _, mode := range []string{"lazy", "eager"} {
		for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT} {
			t.Run(mode+"/"+sig.String(), func(t *testing.T) {
				args := []string{"--trust", "tools", "call", "Sleep", `{"ms": 600000}`}
				if mode == "eager" {
					args = append([]string{"--eager-plugins"}, args...)
				}
				cmd := exec.Command(kosongHost(t), args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), declcache.CacheDirEnv+"="+cache)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				var plugin int
				waitFor(t, "plugin started", 30*time.Second, func() bool {
					kids := children(cmd.Process.Pid)
					if len(kids) > 0 {
						plugin = kids[0]
					}
					return plugin != 0
				})
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				took := waitFor(t, "plugin gone", 10*time.Second, func() bool { return !alive(plugin) })
				t.Logf("plugin %d gone %s after %s to the host", plugin, took, sig)
			})
		}
	}
}

// TestNoOrphanCommands: a shell command (and what it started in the
// background) dies with a host killed by SIGKILL mid-call.
func TestNoOrphanCommands(t *testing.T) {
	work := t.TempDir()
	pidFile := filepath.Join(work, "pids")
	command := fmt.Sprintf("echo $$ > %s.tmp; sleep 300 & echo $! >> %s.tmp; mv %s.tmp %s; wait", pidFile, pidFile, pidFile, pidFile)
	args, _ := json.Marshal(map[string]any{"command": command, "timeout": 300})
	cmd := exec.Command(kosongHost(t), "--agent", filepath.Join(testbin.Root(), "agent.yaml"), "tools", "call", "Shell", string(args), "--yolo")
	cmd.Dir = work
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var pids []int
	waitFor(t, "command started", 60*time.Second, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		for _, f := range strings.Fields(string(b)) {
			n, _ := strconv.Atoi(f)
			pids = append(pids, n)
		}
		return len(pids) == 2
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	took := waitFor(t, "shell and its background sleep gone", 10*time.Second, func() bool {
		return !alive(pids[0]) && !alive(pids[1])
	})
	t.Logf("shell %d and sleep %d gone %s after SIGKILL to the host", pids[0], pids[1], took)
}
