package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestWireReplay: a resumed session replays its history as events (the
// turn, its text, the call and its result, a steered message), then
// answers with their count; a fresh session replays nothing, and replay
// during a turn is refused.
func TestWireReplay(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - text: "Looking."
    tool_calls:
      - {id: c1, name: Shell, arguments: {command: "echo replayed"}}
  - text: "Done."
  - tool_calls:
      - {id: c2, name: Shell, arguments: {command: "echo two"}}
`)
	c := startWire(t, dir, env, "--provider", "scripted", "--script", script)
	initWire(c)
	c.request("r0", "replay", nil)
	if r := c.response("r0"); fmt.Sprint(r["result"]) != "map[events:0 requests:0 status:finished]" {
		t.Fatalf("replay of a new session: %v", r)
	}
	c.request("p1", "prompt", map[string]any{"user_input": "run it"})
	id, _ := c.requestOf("ApprovalRequest")
	c.request("s1", "steer", map[string]any{"user_input": "and be quick"})
	c.response("s1")
	c.answer(id, map[string]any{"request_id": id, "response": "approve"})
	c.response("p1")
	c.request("p2", "prompt", map[string]any{"user_input": "again"})
	c.requestOf("ApprovalRequest")
	c.request("r1", "replay", nil)
	if e := c.response("r1")["error"].(map[string]any); e["code"] != float64(-32000) {
		t.Fatalf("replay during a turn: %v", e)
	}
	c.stdin.Close()
	if !exitsWithin(c.cmd, 60e9) {
		t.Fatal("the first session did not end")
	}

	c2 := startWire(t, dir, env, "--provider", "scripted", "--script", script, "-c")
	initWire(c2)
	c2.request("r2", "replay", nil)
	var got []string
	resp := c2.next("replay's answer", func(m map[string]any) bool {
		if m["method"] == "event" {
			p := m["params"].(map[string]any)
			pl := p["payload"].(map[string]any)
			if pl["replay"] != true {
				t.Errorf("event without replay: true: %v", pl)
			}
			var what string
			switch p["type"] {
			case "TurnBegin", "SteerInput":
				what = fmt.Sprint(pl["user_input"])
			case "ContentPart":
				what = fmt.Sprint(pl["text"])
			case "ToolCall":
				what = fmt.Sprint(pl["id"])
			case "ToolResult":
				what = strings.TrimSpace(fmt.Sprint(pl["return_value"].(map[string]any)["output"]))
			}
			got = append(got, fmt.Sprintf("%s %s", p["type"], what))
		}
		return m["id"] == "r2"
	})
	want := []string{"TurnBegin run it", "ContentPart Looking.", "ToolCall c1", "ToolResult replayed",
		"SteerInput and be quick", "ContentPart Done.", "TurnEnd ", "TurnBegin again", "ToolCall c2"}
	if strings.Join(got[:min(len(got), len(want))], "|") != strings.Join(want, "|") {
		t.Errorf("replayed\n%s\nwant a start of\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r := resp["result"].(map[string]any)
	if r["status"] != "finished" || r["events"] != float64(len(got)) || r["requests"] != float64(0) {
		t.Errorf("replay: %v (%d events seen)", r, len(got))
	}
}
