package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestWireSteer: a message steered in while a call waits for approval
// enters the turn after that step (SteerInput, before the next StepBegin);
// the approval's answer event carries the request's id, and the request
// says where it comes from. A steer with no turn running, or without
// input, is refused with Kimi's codes.
func TestWireSteer(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls:
      - {id: c1, name: Shell, arguments: {command: "echo hi"}}
  - text: "Noted."
`)
	c := startWire(t, dir, env, "--provider", "scripted", "--script", script)
	initWire(c)

	c.request("s0", "steer", map[string]any{"user_input": "too early"})
	if e := c.response("s0")["error"].(map[string]any); e["code"] != float64(-32000) || e["message"] != "No agent turn is in progress" {
		t.Fatalf("steer without a turn: %v", e)
	}

	c.request("p1", "prompt", map[string]any{"user_input": "go"})
	id, req := c.requestOf("ApprovalRequest")
	if req["source_kind"] != "foreground_turn" || req["source_id"] == "" || req["agent_id"] == nil {
		t.Errorf("ApprovalRequest source: %v", req)
	}
	c.request("s1", "steer", map[string]any{"user_input": []any{map[string]any{"type": "text", "text": "use blue"}}})
	if r := c.response("s1"); fmt.Sprint(r["result"]) != "map[status:steered]" {
		t.Fatalf("steer: %v", r)
	}
	c.request("s2", "steer", map[string]any{"user_input": 5})
	if e := c.response("s2")["error"].(map[string]any); e["code"] != float64(-32602) || e["message"] != "Invalid parameters for method `steer`" {
		t.Fatalf("steer with bad input: %v", e)
	}
	c.answer(id, map[string]any{"request_id": id, "response": "approve"})
	if ar := c.event("ApprovalResponse", nil); ar["request_id"] != id || ar["response"] != "approve" {
		t.Errorf("ApprovalResponse %v, want request_id %s", ar, id)
	}
	si := c.event("SteerInput", nil)
	if si["user_input"] != "use blue" || si["n"] != float64(1) {
		t.Errorf("SteerInput %v", si)
	}
	c.event("StepBegin", func(p map[string]any) bool { return p["n"] == float64(2) })
	if r := c.response("p1"); fmt.Sprint(r["result"]) != "map[status:finished steps:2]" {
		t.Fatalf("prompt: %v", r)
	}
}

// TestWireErrorCodes: a provider refusing the credentials is Kimi's
// -32004, any other provider error -32003.
func TestWireErrorCodes(t *testing.T) {
	tests := []struct {
		kind string
		code float64
		text string
	}{
		{"auth", -32004, "authentication error"},
		{"bad_request", -32003, "bad request"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			dir, env := t.TempDir(), emptyEnv(t)
			script := filepath.Join(t.TempDir(), "s.yaml")
			writeScript(t, script, "turns:\n  - error: "+tt.kind+"\n")
			c := startWire(t, dir, env, "--provider", "scripted", "--script", script)
			c.request("p1", "prompt", map[string]any{"user_input": "go"})
			e, _ := c.response("p1")["error"].(map[string]any)
			if e["code"] != tt.code || !strings.Contains(fmt.Sprint(e["message"]), tt.text) {
				t.Fatalf("error %v, want code %v with %q", e, tt.code, tt.text)
			}
		})
	}
}
