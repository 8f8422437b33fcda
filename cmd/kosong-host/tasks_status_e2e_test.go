package main_test

import (
	"regexp"
	"strings"
	"testing"
)

// TestTerminalShowsBackgroundTasks: in an interactive session the status
// line after a turn names the running background task the turn started,
// and /tasks lists it (before it, none runs).
func TestTerminalShowsBackgroundTasks(t *testing.T) {
	agent := strings.Replace(echoAgent, `["echo:Echo"]`, `["shell"]`, 1)
	script := `turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "exec sleep 300", run_in_background: true, description: "a long sleep"}}]
  - text: "Started."
`
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi", "script.yaml": script})
	r := runHost(t, work, "/tasks\nsleep in the background\n/tasks\n", "run", "-i", "--yolo", "--provider", "scripted", "--script", "script.yaml")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	before, after, ok := strings.Cut(r.stdout, "Started.")
	if !ok {
		t.Fatalf("no turn:\n%s", r.stdout)
	}
	if !strings.Contains(before, "No background task is running.") {
		t.Errorf("/tasks before the turn:\n%s", before)
	}
	m := regexp.MustCompile(`1 background task running: (bash-[0-9a-z]{8}) \(a long sleep\) \(/tasks\)`).FindStringSubmatch(after)
	if m == nil {
		t.Fatalf("no status line after the turn:\n%s", after)
	}
	if !regexp.MustCompile(regexp.QuoteMeta(m[1]) + `  running  exec sleep 300\n    a long sleep\n`).MatchString(after) {
		t.Fatalf("/tasks after the turn:\n%s", after)
	}
}
