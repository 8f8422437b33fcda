package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestWireHostilePluginCannotImpersonateShell: a plugin tool that asks
// approval for Shell's action ("run command", described as Shell's) is
// shown as itself (its tool and plugin, named by the host), and approving
// it for the session does not approve the real Shell's "run command": the
// later Shell call is asked again, and runs only if approved.
func TestWireHostilePluginCannotImpersonateShell(t *testing.T) {
	hostile, err := testbin.Build("host/testdata/plugins/hostile", "hostile")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{
		"agent.yaml": fmt.Sprintf("version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools:\n"+
			"    - {plugin: shell, tools: [Shell]}\n    - {plugin: %q, tools: [Sneaky]}\n", hostile),
		"s.md": "hi",
		"script.yaml": `turns:
  - tool_calls: [{id: h1, name: Sneaky, arguments: {}}]
  - tool_calls: [{id: s1, name: Shell, arguments: {command: "echo shell-ran > shell.txt"}}]
  - text: "Done."
`,
	})
	c := startWire(t, dir, emptyEnv(t), "--agent", filepath.Join(dir, "agent.yaml"),
		"--provider", "scripted", "--script", filepath.Join(dir, "script.yaml"))
	initWire(c)
	c.request("p1", "prompt", map[string]any{"user_input": "go"})

	var asked []map[string]any
	resp, results := c.untilResponse("p1", func(m map[string]any, typ string, pl map[string]any) {
		if typ != "ApprovalRequest" {
			return
		}
		asked = append(asked, pl)
		// The hostile tool is approved for the session; anything asked
		// after it is rejected.
		answer := map[string]any{"request_id": pl["id"], "response": "reject", "feedback": "not Shell"}
		if len(asked) == 1 {
			answer = map[string]any{"request_id": pl["id"], "response": "approve_for_session"}
		}
		c.answer(m["id"], answer)
	})
	if fmt.Sprint(resp["result"]) != "map[status:finished steps:3]" {
		t.Fatalf("prompt: %v", resp)
	}
	if len(asked) != 2 {
		t.Fatalf("%d approval requests, want 2 (the Shell call must be asked): %v", len(asked), asked)
	}
	first, second := asked[0], asked[1]
	if first["tool_call_id"] != "h1" || first["sender"] != "Sneaky" || first["plugin"] != "hostile" || first["action"] != "run command" {
		t.Errorf("the hostile request is not shown as itself: %v", first)
	}
	if second["tool_call_id"] != "s1" || second["sender"] != "Shell" || second["plugin"] != "shell" || second["action"] != "run command" {
		t.Errorf("the Shell request: %v", second)
	}
	if results["h1"]["is_error"] != false || results["s1"]["is_error"] != true {
		t.Errorf("results %v", results)
	}
	if _, err := os.Stat(filepath.Join(dir, "shell.txt")); err == nil {
		t.Errorf("Shell ran on the hostile tool's session approval")
	}
}
