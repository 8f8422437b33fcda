package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
)

// TestFloodingPluginIsBounded: a plugin not built on pluginsdk returns
// 15 MB of text and sends 10,000 progress reports of 10 KB, through the
// real host binary: the history and every stream-json line stay within the
// limits, the full text is saved, and progress reaches the front end at
// most once an interval.
func TestFloodingPluginIsBounded(t *testing.T) {
	flood, err := testbin.Build("host/testdata/plugins/flood", "flood")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{
		"agent.yaml": fmt.Sprintf("version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools:\n    - {plugin: %q, tools: [Result, Progress]}\n", flood),
		"s.md":       "hi",
		"script.yaml": fmt.Sprintf(`
turns:
  - tool_calls: [{id: r1, name: Result, arguments: {field: output, bytes: %d}}]
  - tool_calls: [{id: p1, name: Progress, arguments: {count: 10000, bytes: 10000}}]
  - text: "Done."
`, 15<<20),
	})
	start := time.Now()
	r := runHost(t, dir, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo",
		"--output-format", "stream-json", "-p", "flood me")
	elapsed := time.Since(start)
	if r.code != 0 {
		t.Fatalf("exit %d\n%.2000s\n%.2000s", r.code, r.stdout, r.stderr)
	}
	var stateDir string
	progress := 0
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if len(line) > limits.StreamJSONLineBytes {
			t.Fatalf("a stream-json line of %d bytes: %.200s", len(line), line)
		}
		var ev struct {
			Type, Message, Output string
			StateDir              string `json:"state_dir"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%.200q: %v", line, err)
		}
		switch ev.Type {
		case "session":
			stateDir = ev.StateDir
		case "tool_progress":
			progress++
		case "tool_result":
			if strings.Contains(ev.Output, "xxxx") && !strings.Contains(ev.Message, "is saved in") {
				t.Fatalf("the 15 MB result is not cut: %.300s", ev.Message)
			}
		}
	}
	if max := int(elapsed/limits.ProgressInterval) + 2; progress > max || progress == 0 {
		t.Fatalf("%d progress events in %v, want 1 to %d", progress, elapsed, max)
	}
	history, err := os.Stat(filepath.Join(stateDir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if history.Size() > 1<<20 {
		t.Fatalf("history.jsonl is %d bytes", history.Size())
	}
	full, err := os.Stat(filepath.Join(stateDir, "plugins", "flood", limits.OutputsDir, "r1.txt"))
	if err != nil || full.Size() != 15<<20 {
		t.Fatalf("the full output: %v %v", full, err)
	}
}
