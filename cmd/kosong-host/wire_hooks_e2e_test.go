package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWireClientHooks: a client subscribing to PreToolUse at initialize
// is asked (HookRequest, between HookTriggered and HookResolved) before a
// Shell call runs, and its block stops the call with its reason; the
// initialize result lists the events and the subscriptions in force.
func TestWireClientHooks(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls:
      - {id: c1, name: Shell, arguments: {command: "echo ran > ran.txt"}}
  - text: "Blocked, then."
`)
	c := startWire(t, dir, env, "--provider", "scripted", "--script", script, "--yolo")
	c.request("init", "initialize", map[string]any{"protocol_version": "1.10", "client": map[string]any{"name": "test"},
		"hooks": []any{
			map[string]any{"id": "h1", "event": "PreToolUse", "matcher": "^Shell$", "timeout": 10},
			map[string]any{"id": "h2", "event": "NoSuchEvent"},
			map[string]any{"id": "h3", "event": "PreToolUse", "matcher": "("},
		}})
	res := c.response("init")["result"].(map[string]any)["hooks"].(map[string]any)
	if fmt.Sprint(res["configured"]) != "map[PreToolUse:1]" || !strings.Contains(fmt.Sprint(res["supported_events"]), "PreToolUse") {
		t.Fatalf("initialize hooks: %v", res)
	}
	c.request("p1", "prompt", map[string]any{"user_input": "go"})
	if tr := c.event("HookTriggered", nil); tr["event"] != "PreToolUse" || tr["target"] != "Shell" || tr["hook_count"] != float64(1) {
		t.Errorf("HookTriggered %v", tr)
	}
	id, req := c.requestOf("HookRequest")
	in, _ := req["input_data"].(map[string]any)
	if req["subscription_id"] != "h1" || req["event"] != "PreToolUse" || req["target"] != "Shell" ||
		in["tool_name"] != "Shell" || in["hook_event_name"] != "PreToolUse" || in["tool_call_id"] != "c1" {
		t.Fatalf("HookRequest %v", req)
	}
	c.answer(id, map[string]any{"request_id": id, "action": "block", "reason": "no shell today"})
	if r := c.event("HookResolved", nil); r["action"] != "block" || r["reason"] != "no shell today" || r["duration_ms"] == nil {
		t.Errorf("HookResolved %v", r)
	}
	resp, results := c.untilResponse("p1", func(m map[string]any, typ string, pl map[string]any) {
		t.Errorf("unexpected request %s %v", typ, pl)
	})
	if fmt.Sprint(resp["result"]) != "map[status:finished steps:2]" {
		t.Fatalf("prompt %v", resp)
	}
	if r := results["c1"]; r["is_error"] != true || !strings.Contains(fmt.Sprint(r["message"], r["output"]), "no shell today") {
		t.Errorf("Shell result %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Errorf("the blocked command ran")
	}
}
