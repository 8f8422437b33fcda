//go:build unix

package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestRunInterruptKeepsWhatHappened: SIGINT to a one-shot run while one
// Shell call has finished and another is running. The run exits 130 with
// the session saved: the finished call with its real result, the running
// one answered as interrupted, then the note. --resume continues from it and
// the server, which checks that every call has one result, accepts it.
func TestRunInterruptKeepsWhatHappened(t *testing.T) {
	work := writeFiles(t, map[string]string{"agent.yaml": shellAgent, "s.md": "You run commands."})
	fifo := filepath.Join(work, "started.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := openaitest.NewValidatingServer(t,
		openaitest.Response{
			Text: []string{"Two commands."},
			ToolCalls: []openaitest.ToolCall{
				{Name: "Shell", Arguments: `{"command":"echo started > started.fifo && sleep 120"}`},
				{Name: "Shell", Arguments: `{"command":"echo quick"}`},
			},
		},
		openaitest.Response{Text: []string{"Resumed."}},
	)
	state := t.TempDir()
	env := []string{"OPENAI_API_KEY=x", "OPENAI_BASE_URL=" + srv.BaseURL(), "XDG_STATE_HOME=" + state}

	cmd := exec.Command(kosongHost(t), "--trust", "run", "--yolo", "--output-format", "stream-json", "-p", "Run both.")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "KOSONG_PLUGIN_PATH=", "KIMI_API_KEY=", "ANTHROPIC_API_KEY=", "GOOGLE_API_KEY=",
		"GEMINI_API_KEY=", "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	// The slow command has started once the fifo has a writer; the quick
	// one has finished once its tool_result is out.
	started := make(chan error, 1)
	go func() {
		f, err := os.Open(fifo)
		if err == nil {
			_, err = io.ReadAll(f)
			f.Close()
		}
		started <- err
	}()
	var out bytes.Buffer
	quickDone := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(io.TeeReader(stdout, &out))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		closed := false
		for sc.Scan() {
			var ev struct{ Type, ID string }
			_ = json.Unmarshal(sc.Bytes(), &ev)
			if ev.Type == "tool_result" && ev.ID == "call_1" && !closed {
				close(quickDone)
				closed = true
			}
		}
	}()
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(60 * time.Second):
			t.Fatalf("timed out waiting for %s\nstdout %s\nstderr %s", what, out.String(), stderr.String())
		}
	}
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the slow command did not start\nstderr %s", stderr.String())
	}
	wait(quickDone, "the quick call's result")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	wait(readDone, "the run's output to end")
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\nstdout %s\nstderr %s", err, out.String(), stderr.String())
	}
	evs := streamEvents(t, out.String())
	if ints := eventsOfType(evs, "interrupted"); len(ints) != 1 || len(ints[0]["calls"].([]any)) != 2 {
		t.Fatalf("interrupted events %v\n%s", ints, out.String())
	}
	for _, r := range eventsOfType(evs, "tool_result") {
		if cancelled := r["id"] == "call_0"; r["cancelled"] != cancelled {
			t.Errorf("tool_result %v", r)
		}
	}

	// Resume: the saved history goes back to the model, whole.
	r := runHostEnv(t, work, env, "", "run", "--yolo", "--resume", "last", "-p", "What happened?")
	if r.code != 0 || !strings.Contains(r.stdout, "Resumed.") {
		t.Fatalf("resumed run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	results := map[string]string{}
	var users []string
	for _, m := range reqs[1].Chat.Messages {
		switch m.Role {
		case "tool":
			results[m.ToolCallID] = m.Text()
		case "user":
			users = append(users, m.Text())
		}
	}
	if strings.TrimSpace(results["call_1"]) != "quick" {
		t.Errorf("finished call: %q", results["call_1"])
	}
	if got := results["call_0"]; !strings.Contains(got, "interrupted by the user") || !strings.Contains(got, "had started") {
		t.Errorf("interrupted call: %q", got)
	}
	if len(users) != 3 || users[0] != "Run both." || !strings.Contains(users[1], "The user interrupted you") || users[2] != "What happened?" {
		t.Errorf("user messages %q", users)
	}
}

// TestRunInterruptWhilePluginsStart: Ctrl-C while a plugin is still
// starting ends the run as interrupted (130), not as a load error. (The
// launcher waits out the handshake timeout before the load returns, so the
// timeout is short, yet far longer than the signal takes to arrive.)
func TestRunInterruptWhilePluginsStart(t *testing.T) {
	hang, err := testbin.Build("host/testdata/plugins/hang", "hang")
	if err != nil {
		t.Fatal(err)
	}
	agent := "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"" + hang + ":X\"]\n"
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi", "script.yaml": "turns:\n  - text: hi\n"})
	cmd := exec.Command(kosongHost(t), "--trust", "--log-level", "debug", "--plugin-start-timeout", "10s",
		"run", "--provider", "scripted", "--script", "script.yaml", "-p", "hi")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "KOSONG_PLUGIN_PATH=", "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	starting := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		seen := false
		for sc.Scan() {
			if !seen && strings.Contains(sc.Text(), "starting plugin") {
				seen = true
				close(starting)
			}
		}
	}()
	select {
	case <-starting:
	case <-time.After(60 * time.Second):
		t.Fatal("the plugin did not start")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130", err)
	}
}
