package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/testbin"
)

// streamEvents parses stream-json output.
func oneShotRun(t *testing.T, script, stdin string, args ...string) result {
	t.Helper()
	work := writeFiles(t, map[string]string{"script.yaml": script})
	return runHostEnv(t, work, nil, stdin, append([]string{"--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run",
		"--provider", "scripted", "--script", "script.yaml"}, args...)...)
}

// TestOneShotStdoutIsTheAnswer: in text mode stdout carries the final
// answer only; the text before a tool call, the tool lines and the usage go
// to stderr; the prompt may be the argument.
func TestOneShotStdoutIsTheAnswer(t *testing.T) {
	r := oneShotRun(t, `
turns:
  - text: "Let me check."
    tool_calls: [{id: c1, name: Echo, arguments: {text: from-echo}}]
  - text: "The answer is 42."
`, "", "what is it?")
	if r.code != 0 || r.stdout != "The answer is 42.\n" {
		t.Fatalf("exit %d, stdout %q (want only the answer)\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"Let me check.", "• Echo  from-echo", "✓ Echo", "[2 steps"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// TestOneShotPipedStdinIsContext: `git diff | kosong-host run -p review`
// sends the prompt and the piped text; the stream ends with the result
// event; a refused call exits 3.
func TestOneShotPipedStdinIsContext(t *testing.T) {
	r := oneShotRun(t, `
turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "echo hi > x.txt"}}]
  - text: "I could not run it."
`, "diff --git a/x b/x\n+new line\n", "-p", "review this", "--output-format", "stream-json")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3 (a call was refused)\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	events := streamEvents(t, r.stdout)
	last := events[len(events)-1]
	if last["type"] != "result" || last["text"] != "I could not run it." || last["stop_reason"] != "done" ||
		last["refused"] != float64(1) || last["exit_code"] != float64(3) || last["steps"] != float64(2) {
		t.Fatalf("last event %v", last)
	}
	if _, ok := last["usage"].(map[string]any); !ok {
		t.Errorf("result without usage: %v", last)
	}
	first := events[0]
	if first["type"] != "session" || last["session_id"] != first["session_id"] {
		t.Fatalf("session %v, result %v", first, last)
	}
	h, err := session.LoadHistory(filepath.Join(first["state_dir"].(string), session.HistoryFile))
	if err != nil || len(h) == 0 {
		t.Fatalf("history %v %v", h, err)
	}
	want := "review this\n\n<stdin>\ndiff --git a/x b/x\n+new line\n</stdin>"
	if got := h[0].Text(); got != want {
		t.Fatalf("the model was sent %q, want %q", got, want)
	}
}

// TestOneShotStdinAlone: stdin alone is still the prompt.
func TestOneShotStdinAlone(t *testing.T) {
	r := oneShotRun(t, "turns:\n  - text: Read it.\n", "the question\n", "--output-format", "stream-json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	events := streamEvents(t, r.stdout)
	h, err := session.LoadHistory(filepath.Join(events[0]["state_dir"].(string), session.HistoryFile))
	if err != nil || len(h) != 2 || h[0].Text() != "the question" {
		t.Fatalf("history %v %v", h, err)
	}
}
