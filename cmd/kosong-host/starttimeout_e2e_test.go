package main_test

import (
	"strings"
	"testing"
)

// TestStartTimeoutOneLine: when the built-in plugins miss the start
// timeout, stderr is one line that names them and the flag that gives
// them longer; no log lines.
func TestStartTimeoutOneLine(t *testing.T) {
	work := writeFiles(t, map[string]string{"script.yaml": "turns:\n  - text: hi\n"})
	r := runHostEnv(t, work, emptyEnv(t), "", "--plugin-start-timeout", "1ms", "run", "-p", "hi", "--provider", "scripted", "--script", "script.yaml")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d lines, want 1:\n%s", len(lines), r.stderr)
	}
	want := "error: 7 plugins did not start within 1ms (shell, file, web, todo, think, ask, media); " +
		"a busy machine starts plugins slowly: give them longer with --plugin-start-timeout"
	if lines[0] != want {
		t.Errorf("stderr\n%s\nwant\n%s", lines[0], want)
	}
}
