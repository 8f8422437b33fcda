package main_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWireSubagentEvent: the events of a subagent's own turn arrive
// wrapped in SubagentEvent, naming the Agent call that started it.
func TestWireSubagentEvent(t *testing.T) {
	agent := strings.Replace(guardAgent, "name: t", "name: t\n  subagents:\n    helper: {path: ./sub.yaml, description: helps}", 1)
	sub := strings.Replace(guardAgent, "name: t", "name: sub", 1)
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "sub.yaml": sub, "s.md": "hi", "script.yaml": `turns:
  - tool_calls: [{id: p1, name: Agent, arguments: {subagent: helper, prompt: "say hi"}}]
  - tool_calls: [{id: s1, name: Shell, arguments: {command: "echo from-sub"}}]
  - text: sub done
  - text: parent done
`})
	c := startWire(t, work, emptyEnv(t), "--agent", filepath.Join(work, "agent.yaml"), "--provider", "scripted",
		"--script", filepath.Join(work, "script.yaml"), "--yolo")
	initWire(c)
	c.request("p", "prompt", map[string]any{"user_input": "go"})
	var inner []string
	var text strings.Builder
	for {
		ev := c.event("SubagentEvent", nil)
		if ev["parent_tool_call_id"] != "p1" || ev["subagent_type"] != "helper" || ev["agent_id"] == "" {
			t.Fatalf("SubagentEvent %v", ev)
		}
		e := ev["event"].(map[string]any)
		typ := e["type"].(string)
		pl := e["payload"].(map[string]any)
		switch typ {
		case "ToolResult":
			inner = append(inner, typ+" "+strings.TrimSpace(pl["return_value"].(map[string]any)["output"].(string)))
		case "ContentPart":
			text.WriteString(pl["text"].(string))
		default:
			inner = append(inner, typ)
		}
		if typ == "TurnEnd" {
			break
		}
	}
	got := strings.Join(inner, "|")
	for _, want := range []string{"StepBegin", "ToolCall", "ToolResult from-sub", "TurnEnd"} {
		if !strings.Contains(got, want) {
			t.Errorf("subagent events %s: no %q", got, want)
		}
	}
	if text.String() != "sub done" {
		t.Errorf("subagent text %q", text.String())
	}
	res := c.event("ToolResult", func(p map[string]any) bool { return p["tool_call_id"] == "p1" })
	if !strings.Contains(res["return_value"].(map[string]any)["output"].(string), "sub done") {
		t.Errorf("Agent result %v", res)
	}
	c.response("p")
}
