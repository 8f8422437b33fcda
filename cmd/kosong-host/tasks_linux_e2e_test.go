//go:build linux

package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A background `sleep` through the real binary and the shell plugin it
// launches: started, listed, read, stopped; another one left running dies
// when the session ends.
func TestBackgroundTasksEndToEnd(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": strings.Replace(echoAgent, `["echo:Echo"]`, `["shell"]`, 1), "s.md": "hi"})
	cs := serveMCP(t, dir, nil, "--yolo")

	start := func(command string) string {
		t.Helper()
		text, isErr := callMCP(t, cs, "Shell", map[string]any{"command": command, "run_in_background": true, "description": "a sleep"})
		id := regexp.MustCompile(`task_id: (bash-[0-9a-z]{8})`).FindStringSubmatch(text)
		if isErr || id == nil {
			t.Fatalf("start %q: %v %s", command, isErr, text)
		}
		return id[1]
	}
	id := start("echo sleeping; exec sleep 300")
	list, _ := callMCP(t, cs, "TaskList", map[string]any{})
	if !strings.Contains(list, "task_id: "+id) || !strings.Contains(list, "status: running") {
		t.Fatalf("TaskList: %s", list)
	}
	out, _ := callMCP(t, cs, "TaskOutput", map[string]any{"task_id": id, "block": true, "timeout": 1})
	if !strings.Contains(out, "retrieval_status: timeout") || !strings.Contains(out, "[output]\nsleeping") {
		t.Fatalf("TaskOutput: %s", out)
	}
	if m := regexp.MustCompile(`output_path: (.*)`).FindStringSubmatch(out); m == nil || !strings.Contains(m[1], filepath.Join("plugins", "shell", "tasks", id, "output.log")) {
		t.Fatalf("the output log is not in the shell plugin's state dir: %s", out)
	}
	stop, isErr := callMCP(t, cs, "TaskStop", map[string]any{"task_id": id})
	if isErr || !strings.Contains(stop, "status: killed") {
		t.Fatalf("TaskStop: %v %s", isErr, stop)
	}
	if text, isErr := callMCP(t, cs, "TaskOutput", map[string]any{"task_id": "bash-unknown0"}); !isErr || !strings.Contains(text, "Task not found: bash-unknown0") {
		t.Fatalf("unknown task: %v %s", isErr, text)
	}

	// Left running: killed with the session.
	start("echo $$ > left.pid; exec sleep 300")
	var pid int
	waitFor(t, "the task writes its pid", 30*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "left.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	if !alive(pid) {
		t.Fatalf("task %d is not running", pid)
	}
	if err := cs.Close(); err != nil && !strings.Contains(err.Error(), "signal") {
		t.Fatal(err)
	}
	waitFor(t, "the task dies with the session", 30*time.Second, func() bool { return !alive(pid) })
}
