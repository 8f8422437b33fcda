package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func initWireQuestions(c *wireClient, supports bool) map[string]any {
	c.t.Helper()
	c.request("init", "initialize", map[string]any{"protocol_version": "1.10", "client": map[string]any{"name": "test"},
		"capabilities": map[string]any{"supports_question": supports}})
	return c.response("init")
}

// TestWireQuestions: a client that declares supports_question answers
// AskUserQuestion through a QuestionRequest; for one that does not, the
// tool is not loaded and the model's call fails without asking.
func TestWireQuestions(t *testing.T) {
	for _, supports := range []bool{true, false} {
		work := writeFiles(t, map[string]string{"agent.yaml": askAgent, "s.md": "hi", "script.yaml": askScript})
		c := startWire(t, work, emptyEnv(t), "--agent", "agent.yaml", "--provider", "scripted", "--script", "script.yaml")
		init := initWireQuestions(c, supports)
		caps := init["result"].(map[string]any)["capabilities"].(map[string]any)
		if caps["supports_question"] != supports {
			t.Fatalf("initialize with supports_question %v: %v", supports, init)
		}
		c.request("p1", "prompt", map[string]any{"user_input": "Set up a database."})
		if supports {
			id, pl := c.requestOf("QuestionRequest")
			qs := pl["questions"].([]any)
			q := qs[0].(map[string]any)
			if pl["tool_call_id"] != "c1" || len(qs) != 1 || q["question"] != "Which database?" || q["header"] != "Database" ||
				q["multi_select"] != false || len(q["options"].([]any)) != 2 ||
				q["options"].([]any)[1].(map[string]any)["description"] != "embedded" {
				t.Fatalf("QuestionRequest %v", pl)
			}
			c.answer(id, map[string]any{"request_id": pl["id"], "answers": map[string]any{"Which database?": "SQLite"}})
		}
		rv := c.event("ToolResult", nil)["return_value"].(map[string]any)
		if supports && (rv["is_error"] != false || !strings.Contains(rv["output"].(string), `"Which database?":"SQLite"`)) {
			t.Fatalf("answered: tool result %v", rv)
		}
		if !supports && rv["is_error"] != true {
			t.Fatalf("unsupported: tool result %v", rv)
		}
		if r := c.response("p1"); r["result"] == nil {
			t.Fatalf("prompt: %v", r)
		}
		for _, m := range c.seen {
			if p, _ := m["params"].(map[string]any); !supports && p["type"] == "QuestionRequest" {
				t.Fatalf("a QuestionRequest to a client without supports_question: %v", m)
			}
		}
	}
}

// TestWireReload: the reload request starts a plugin added to agent.yaml
// (the model's next call uses it) and reports a broken edit, keeping the
// toolset.
func TestWireReload(t *testing.T) {
	two := "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"shell:Shell\", \"echo:Echo\"]\n"
	script := `turns:
  - tool_calls: [{id: c1, name: Echo, arguments: {text: reloaded}}]
  - text: done
`
	work := writeFiles(t, map[string]string{"agent.yaml": guardAgent, "s.md": "hi", "script.yaml": script})
	c := startWire(t, work, emptyEnv(t), "--agent", "agent.yaml", "--provider", "scripted", "--script", "script.yaml", "--yolo")
	initWire(c)

	if err := os.WriteFile(filepath.Join(work, "agent.yaml"), []byte("version: 1\nagent: [broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.request("r1", "reload", nil)
	r := c.response("r1")
	if e, _ := r["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "Invalid YAML in agent spec file") {
		t.Fatalf("reload of a broken agent.yaml: %v", r)
	}

	if err := os.WriteFile(filepath.Join(work, "agent.yaml"), []byte(two), 0o644); err != nil {
		t.Fatal(err)
	}
	c.request("r2", "reload", map[string]any{})
	r = c.response("r2")
	res, _ := r["result"].(map[string]any)
	if res == nil || join(res["started"]) != "echo" || join(res["kept"]) != "shell" || join(res["stopped"]) != "" ||
		!strings.Contains(join(res["tools"]), "Echo") {
		t.Fatalf("reload: %v", r)
	}
	c.request("p1", "prompt", map[string]any{"user_input": "Echo."})
	rv := c.event("ToolResult", nil)["return_value"].(map[string]any)
	if rv["is_error"] != false || rv["output"] != "reloaded" {
		t.Fatalf("Echo after reload: %v", rv)
	}
	if r := c.response("p1"); r["result"] == nil {
		t.Fatalf("prompt: %v", r)
	}
}
