//go:build unix

package main_test

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestServeSharesPluginProcesses: three sessions of one `kosong-host
// serve` run a plugin in one process, each with its own load (its own
// session id, its own counter); killed between turns, the process is
// restarted once for all three, and each session loads its tools again
// (a call that reached the dead process before the host saw it die fails
// cleanly, as for a process of one session).
func TestServeSharesPluginProcesses(t *testing.T) {
	plug, err := testbin.Build("host/testdata/plugins/sessions", "shared/kosong-plugin-sessions")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{
		"agent.yaml": "version: 1\nagent:\n  name: shared\n  system_prompt_path: ./s.md\n  tools: [sessions]\n",
		"s.md":       "You count.",
		"script.yaml": "turns:\n  - tool_calls: [{id: c1, name: Count, arguments: {}}]\n  - text: Counted.\n" +
			"  - tool_calls: [{id: c2, name: Count, arguments: {}}]\n  - text: Counted again.\n" +
			"  - tool_calls: [{id: c3, name: Count, arguments: {}}]\n  - text: Counted once more.\n",
	})
	sock := filepath.Join(t.TempDir(), "s.sock")
	const token = "shared-plugins-token-0123"
	cmd := exec.Command(kosongHost(t), "--trust", "--plugin-dir", filepath.Dir(plug), "serve", "--listen", sock,
		"--token-env", "KOSONG_TEST_TOKEN", "--provider", "scripted", "--script", filepath.Join(dir, "script.yaml"), "--yolo")
	cmd.Dir = dir
	cmd.Env = hostEnv("XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "KOSONG_TEST_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() && !strings.Contains(lines.Text(), "listening on") {
		seen = append(seen, lines.Text())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	c, err := serverclient.New("unix://"+sock, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.Health(ctx); err != nil {
		t.Fatalf("serve did not start: %v\n%s", err, strings.Join(seen, "\n"))
	}

	count := regexp.MustCompile(`^session=(\S+) count=(\d+) pid=(\d+)$`)
	// turn runs turn n in session id and returns the pid and count its
	// Count call reported, or the error it failed with.
	turn := func(id string, n int) (pid int, counted string, failed string) {
		t.Helper()
		if _, err := c.Send(ctx, id, serverclient.Message{Text: "count"}); err != nil {
			t.Fatal(err)
		}
		for {
			s, err := c.Session(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if s.Status == serverclient.StatusIdle {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("session %s: the turn did not end", id)
			case <-time.After(20 * time.Millisecond):
			}
		}
		h, err := c.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var results []string
		for _, m := range h.Messages {
			if m.Role == "tool" {
				results = append(results, m.Text)
			}
		}
		if len(results) != n {
			t.Fatalf("session %s: tool results %q, want %d", id, results, n)
		}
		if strings.Contains(results[n-1], "plugin sessions stopped during the call") {
			return 0, "", results[n-1]
		}
		m := count.FindStringSubmatch(results[n-1])
		if m == nil || m[1] != id {
			t.Fatalf("session %s: Count said %q", id, results[n-1])
		}
		pid, _ = strconv.Atoi(m[3])
		return pid, m[2], ""
	}

	var ids []string
	pids := map[int]bool{}
	for range 3 {
		s, err := c.CreateSession(ctx, serverclient.CreateSession{Cwd: dir, Agent: filepath.Join(dir, "agent.yaml")})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
		pid, counted, failed := turn(s.ID, 1)
		if counted != "1" || failed != "" {
			t.Fatalf("session %s: count %s, want 1 (each session's counter is its own)", s.ID, counted)
		}
		pids[pid] = true
	}
	if len(pids) != 1 {
		t.Fatalf("three sessions ran the plugin in processes %v: want one", pids)
	}
	var first int
	for pid := range pids {
		first = pid
	}
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	after := map[int]bool{}
	for _, id := range ids {
		want := "1" // a new load in the new process
		if pid, counted, failed := turn(id, 2); failed == "" {
			if counted != "1" {
				t.Fatalf("session %s after the restart: count %s, want 1 (a new load)", id, counted)
			}
			after[pid] = true
			want = "2"
		}
		pid, counted, failed := turn(id, 3)
		if failed != "" || counted != want {
			t.Fatalf("session %s, the call after: count %s (%s), want %s", id, counted, failed, want)
		}
		after[pid] = true
	}
	if len(after) != 1 || after[first] {
		t.Fatalf("after the kill the sessions ran in %v (the killed one was %d): want one new process", after, first)
	}
}
