//go:build linux

package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// sleepers lists the pids of live processes whose command line is exactly
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
		if err == nil && bytes.Equal(b, want) && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// toolResult is a tool_result event of run's stream-json output.
type toolResult struct{ ID, Status, Output string }

// startSleeperRun starts `run --output-format stream-json -p go` with the
// scripted provider of script.yaml in dir, and returns the host, its tool
// results in order (closed at the end of its output) and its stderr. Its
// cleanup kills the host and every `sleep SECONDS` left for the durations
// given.
func startSleeperRun(t *testing.T, dir string, sleeps ...int) (*exec.Cmd, <-chan toolResult, *bytes.Buffer) {
	t.Helper()
	t.Cleanup(func() {
		for _, s := range sleeps {
			for _, pid := range sleepers(s) {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	cmd := exec.Command(kosongHost(t), "--trust", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo",
		"--output-format", "stream-json", "-p", "go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KOSONG_PLUGIN_PATH=", "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	results := make(chan toolResult, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var ev struct {
				Type string
				toolResult
			}
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "tool_result" {
				results <- ev.toolResult
			}
		}
		io.Copy(io.Discard, stdout)
		close(results)
	}()
	return cmd, results, stderr
}

// TestNoOrphansOnAnyExit: whatever ends the host (the turn's end, SIGINT,
// SIGTERM, SIGHUP, SIGKILL), a process group a tool tracked and a job a
// Shell command left running in the background are gone within 2 s of the
// host's exit; until then the background job lives on with the session.
func TestNoOrphansOnAnyExit(t *testing.T) {
	cc, err := testbin.Build("host/testdata/plugins/capcheck", "capcheck")
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name string
		sig  syscall.Signal // 0: the turn ends and the host exits by itself
	}{
		{"normal exit", 0},
		{"SIGINT", syscall.SIGINT},
		{"SIGTERM", syscall.SIGTERM},
		{"SIGHUP", syscall.SIGHUP},
		{"SIGKILL", syscall.SIGKILL},
	}
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			// Durations no other test or process uses: the process table
			// is matched on them exactly.
			bg, tracked := 781000+i, 987000+i
			script := fmt.Sprintf(`
turns:
  - tool_calls:
      - {id: sh, name: Shell, arguments: {command: "sleep %d >/dev/null 2>&1 &"}}
      - {id: sp, name: Spawn, arguments: {seconds: %d}}
  - tool_calls:
      - {id: wait, name: Shell, arguments: {command: "while [ ! -e go-on ]; do sleep 0.05; done"}}
  - text: "done"
`, bg, tracked)
			dir := writeFiles(t, map[string]string{
				"agent.yaml":  fmt.Sprintf("version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [%q, \"shell:Shell\"]\n", cc+":Spawn"),
				"s.md":        "",
				"script.yaml": script,
			})
			cmd, results, stderr := startSleeperRun(t, dir, bg, tracked)
			// The first step's calls have returned; the background job and
			// the tracked group still run while the session lives.
			for range 2 {
				select {
				case r := <-results:
					if r.Status != "ok" && r.Status != "success" {
						t.Logf("result %s:%s", r.ID, r.Status)
					}
				case <-time.After(60 * time.Second):
					t.Fatalf("no tool result\n%s", stderr.String())
				}
			}
			waitFor(t, "the tracked group and the background job running", 30*time.Second, func() bool {
				return len(sleepers(bg)) == 1 && len(sleepers(tracked)) == 1
			})
			if row.sig == 0 {
				if err := os.WriteFile(dir+"/go-on", nil, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := cmd.Process.Signal(row.sig); err != nil {
				t.Fatal(err)
			}
			waitErr := make(chan error, 1)
			go func() { waitErr <- cmd.Wait() }()
			select {
			case err := <-waitErr:
				if row.sig == 0 && err != nil {
					t.Fatalf("host: %v\n%s", err, stderr.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("the host did not exit\n%s", stderr.String())
			}
			took := waitFor(t, "no sleep left", 2*time.Second, func() bool {
				return len(sleepers(bg)) == 0 && len(sleepers(tracked)) == 0
			})
			t.Logf("background job and tracked group gone %s after the host exited", took)
		})
	}
}

// TestNoOrphansAfterARestart: when plugins die mid-session (the shell
// plugin is killed by a command, the capcheck plugin crashes) and are
// restarted for the next calls, what the old processes left running (a
// Shell background job, a tracked process group) is gone within 2 s, while
// the session and the restarted plugins go on.
func TestNoOrphansAfterARestart(t *testing.T) {
	cc, err := testbin.Build("host/testdata/plugins/capcheck", "capcheck")
	if err != nil {
		t.Fatal(err)
	}
	const bg, tracked, after = 781901, 987901, 987902
	script := fmt.Sprintf(`
turns:
  - tool_calls:
      - {id: bg, name: Shell, arguments: {command: "sleep %d >/dev/null 2>&1 & until [ \"$(cat /proc/$!/comm)\" = sleep ]; do :; done"}}
      - {id: sp, name: Spawn, arguments: {seconds: %d}}
  - tool_calls:
      - {id: hold, name: Shell, arguments: {command: "while [ ! -e go-kill ]; do sleep 0.05; done"}}
  - tool_calls:
      - {id: kill, name: Shell, arguments: {command: "kill -9 $PPID"}}
      - {id: crash, name: Crash, arguments: {}}
  - tool_calls:
      - {id: again, name: Shell, arguments: {command: "echo again"}}
      - {id: sp2, name: Spawn, arguments: {seconds: %d}}
  - tool_calls:
      - {id: wait, name: Shell, arguments: {command: "while [ ! -e go-on ]; do sleep 0.05; done"}}
  - text: "done"
`, bg, tracked, after)
	dir := writeFiles(t, map[string]string{
		"agent.yaml":  fmt.Sprintf("version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [%q, %q, \"shell:Shell\"]\n", cc+":Spawn", cc+":Crash"),
		"s.md":        "",
		"script.yaml": script,
	})
	cmd, results, stderr := startSleeperRun(t, dir, bg, tracked, after)
	got := map[string]string{}
	for len(got) < 7 {
		select {
		case r, ok := <-results:
			if !ok {
				t.Fatalf("the run ended early: %v\n%s", got, stderr.String())
			}
			got[r.ID] = r.Status + ": " + r.Output
			// The first step's two calls are in (the Shell command returns
			// once its background job is sleep); the next step holds the
			// kill until the test has seen both running.
			if len(got) == 2 {
				if len(sleepers(bg)) != 1 || len(sleepers(tracked)) != 1 {
					t.Fatalf("before the restart: background %v, tracked %v", sleepers(bg), sleepers(tracked))
				}
				if err := os.WriteFile(dir+"/go-kill", nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("results so far %v\n%s", got, stderr.String())
		}
	}
	if got["again"] != "ok: again\n" && got["again"] != "ok: again" || !strings.HasPrefix(got["sp2"], "ok: ") ||
		!strings.HasPrefix(got["kill"], "error") || !strings.HasPrefix(got["crash"], "error") {
		t.Fatalf("after the restart: %v", got)
	}
	took := waitFor(t, "the old processes' leftovers gone", 2*time.Second, func() bool {
		return len(sleepers(bg)) == 0 && len(sleepers(tracked)) == 0
	})
	if len(sleepers(after)) != 1 {
		t.Fatalf("the restarted plugin's tracked sleep is not running: %v", got)
	}
	t.Logf("leftovers gone %s after the restarted calls answered; results %v", took, got)
	if err := os.WriteFile(dir+"/go-on", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("host: %v\n%s", err, stderr.String())
	}
	waitFor(t, "no sleep left after the session", 2*time.Second, func() bool { return len(sleepers(after)) == 0 })
}
