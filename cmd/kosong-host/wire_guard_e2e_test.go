package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWireGuard: a wire session applies the agent's permission rules and
// hooks as `run` does: a deny rule refuses a Shell call under --yolo, and
// SessionStart and SessionEnd fire.
func TestWireGuard(t *testing.T) {
	agent := guardAgent + `  permissions:
    deny: ["Shell(rm -rf *)"]
  hooks:
    - event: SessionStart
      command: "echo started > started.txt"
    - event: SessionEnd
      command: "echo ended > ended.txt"
`
	script := "turns:\n  - tool_calls: [{id: c1, name: Shell, arguments: {command: \"rm -rf data\"}}]\n  - text: ok\n"
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi", "script.yaml": script, "data/f": "x"})
	c := startWire(t, work, emptyEnv(t), "--agent", "agent.yaml", "--provider", "scripted", "--script", "script.yaml", "--yolo")
	initWire(c)
	c.request("p1", "prompt", map[string]any{"user_input": "Clean up."})
	res := c.event("ToolResult", nil)
	rv := res["return_value"].(map[string]any)
	if rv["is_error"] != true || !strings.Contains(rv["message"].(string), "Permission denied") {
		t.Fatalf("tool result %v", res)
	}
	if r := c.response("p1"); r["result"] == nil {
		t.Fatalf("prompt: %v", r)
	}
	if !fileExists(filepath.Join(work, "data", "f")) {
		t.Fatal("data was removed")
	}
	if b, _ := os.ReadFile(filepath.Join(work, "started.txt")); string(b) != "started\n" {
		t.Errorf("SessionStart hook: started.txt %q", b)
	}
	c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("kosong-host --wire: %v\n%s", err, c.stderrText())
	}
	if b, _ := os.ReadFile(filepath.Join(work, "ended.txt")); string(b) != "ended\n" {
		t.Errorf("SessionEnd hook: ended.txt %q", b)
	}
}
