package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

const askAgent = "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"ask\", \"echo:Echo\"]\n"

const askScript = `
turns:
  - tool_calls: [{id: c1, name: AskUserQuestion, arguments: {questions: [{question: "Which database?", header: "Database",
      options: [{label: Postgres, description: relational}, {label: SQLite, description: embedded}]}]}}]
  - text: "Noted your choice."
`

// In a one-shot run no one can answer: the host offers no UserInput, so
// AskUserQuestion is skipped at load (not a failure) and the model never
// sees it; `tools list` gives the reason.
func TestAskUserQuestionSkippedOneShot(t *testing.T) {
	work := writeFiles(t, map[string]string{"agent.yaml": askAgent, "s.md": "hi",
		"script.yaml": "turns:\n  - text: \"Nothing to ask.\"\n"})
	r := runHost(t, work, "", "--agent", "agent.yaml", "run", "-p", "hi", "--provider", "scripted",
		"--script", "script.yaml", "--output-format", "stream-json")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	first, _, _ := strings.Cut(r.stdout, "\n")
	var start struct {
		Type  string   `json:"type"`
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal([]byte(first), &start); err != nil || start.Type != "session" {
		t.Fatalf("first event %q: %v", first, err)
	}
	if slices.Contains(start.Tools, "AskUserQuestion") || !slices.Contains(start.Tools, "Echo") {
		t.Fatalf("tools of a one-shot run = %v, want Echo without AskUserQuestion", start.Tools)
	}

	r = runHost(t, work, "", "--agent", "agent.yaml", "tools", "list", "--json")
	if r.code != 0 {
		t.Fatalf("tools list: exit %d: %s", r.code, r.stderr)
	}
	var rows []struct{ Name, Status, Reason string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rows, func(r struct{ Name, Status, Reason string }) bool { return r.Name == "AskUserQuestion" })
	if i < 0 || rows[i].Status != "skipped" || !strings.Contains(rows[i].Reason, "no one can answer questions") {
		t.Fatalf("tools list rows = %+v, want AskUserQuestion skipped with the reason", rows)
	}
}

// ptyOutput collects what the program writes to its terminal.
type ptyOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more chan struct{}
}

func (o *ptyOutput) copyFrom(r io.Reader) {
	b := make([]byte, 4096)
	for {
		n, err := r.Read(b)
		o.mu.Lock()
		o.buf.Write(b[:n])
		o.mu.Unlock()
		select {
		case o.more <- struct{}{}:
		default:
		}
		if err != nil {
			close(o.more)
			return
		}
	}
}

// waitFor waits until the output holds s (control sequences left out: the
// terminal renders Markdown), for at most a generous bound.
func (o *ptyOutput) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		o.mu.Lock()
		has := strings.Contains(ansiCode.ReplaceAllString(o.buf.String(), ""), s)
		o.mu.Unlock()
		if has {
			return
		}
		select {
		case _, ok := <-o.more:
			if !ok {
				o.mu.Lock()
				defer o.mu.Unlock()
				if !strings.Contains(ansiCode.ReplaceAllString(o.buf.String(), ""), s) {
					t.Fatalf("the terminal closed without showing %q:\n%s", s, o.buf.String())
				}
				return
			}
		case <-deadline:
			o.mu.Lock()
			defer o.mu.Unlock()
			t.Fatalf("the terminal did not show %q:\n%s", s, o.buf.String())
		}
	}
}

// An interactive session on a terminal: the picker shows the header, the
// options with their descriptions and Other; the user's pick goes back to
// the model as the tool's answer.
func TestAskUserQuestionAnsweredInTerminal(t *testing.T) {
	work := writeFiles(t, map[string]string{"agent.yaml": askAgent, "s.md": "hi", "script.yaml": askScript})
	state := t.TempDir()
	cmd := exec.Command(kosongHost(t), "--agent", "agent.yaml", "run", "--provider", "scripted", "--script", "script.yaml")
	cmd.Dir = work
	cmd.Env = hostEnv("XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+t.TempDir(), "TERM=dumb")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tty.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() })
	out := &ptyOutput{more: make(chan struct{}, 1)}
	go out.copyFrom(tty)

	out.waitFor(t, "> ")
	io.WriteString(tty, "pick a database\r")
	for _, s := range []string{"[Database] Which database?", "1) Postgres - relational", "2) SQLite - embedded", "3) Other", "answer [1-3]"} {
		out.waitFor(t, s)
	}
	io.WriteString(tty, "2\r")
	out.waitFor(t, "Noted your choice.")
	io.WriteString(tty, "exit\r")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, out.buf.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the session did not end after exit:\n%s", out.buf.String())
	}

	hist, err := filepath.Glob(filepath.Join(state, "kosong-host", "sessions", "*", "history.jsonl"))
	if err != nil || len(hist) != 1 {
		t.Fatalf("history files %v: %v", hist, err)
	}
	data, err := os.ReadFile(hist[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{\"answers\":{\"Which database?\":\"SQLite\"}}`; !strings.Contains(string(data), want) {
		t.Fatalf("the history lacks the answer %s:\n%s", want, data)
	}
}
