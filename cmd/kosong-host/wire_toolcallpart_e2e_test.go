package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestWireToolCallPart: a call the model streams in fragments reaches the
// wire client as ToolCallPart events (snake_case, the first naming the
// tool) before its ToolCall, and their arguments_part concatenate to the
// call's arguments.
func TestWireToolCallPart(t *testing.T) {
	args := `{"path":"notes.txt","line_offset":1,"n_lines":20}`
	srv := openaitest.NewServer(t, openaitest.Response{
		Text:      []string{"Reading."},
		ToolCalls: []openaitest.ToolCall{{ID: "call_r", Name: "ReadFile", Arguments: args}},
		Quirks:    openaitest.Quirks{SplitArguments: 3},
	}, openaitest.Response{Text: []string{"Read."}})
	dir, env := t.TempDir(), emptyEnv(t)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgDir := strings.TrimPrefix(env[2], "XDG_CONFIG_HOME=")
	if err := os.MkdirAll(filepath.Join(cfgDir, "kosong-host"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "kosong-host", "config.yaml"), []byte(openaiConfig(srv, "thinking")), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startWire(t, dir, env, "--model", "local")
	initWire(c)
	c.request("p1", "prompt", map[string]any{"user_input": "read notes"})
	var got strings.Builder
	parts := 0
	for {
		m := c.next("ToolCall", func(m map[string]any) bool {
			p, _ := m["params"].(map[string]any)
			return m["method"] == "event" && (p["type"] == "ToolCallPart" || p["type"] == "ToolCall")
		})
		p := m["params"].(map[string]any)
		pl := p["payload"].(map[string]any)
		if p["type"] == "ToolCall" {
			if pl["id"] != "call_r" || pl["function"].(map[string]any)["arguments"] != args {
				t.Fatalf("ToolCall %v", pl)
			}
			break
		}
		if pl["tool_call_id"] != "call_r" || pl["name"] != "ReadFile" || pl["n"] != float64(1) {
			t.Fatalf("ToolCallPart %v", pl)
		}
		got.WriteString(pl["arguments_part"].(string))
		parts++
	}
	// At least the part announcing the call and one with its arguments.
	if got.String() != args || parts < 2 {
		t.Errorf("%d parts concatenate to %q, want %q", parts, got.String(), args)
	}
	if r := c.response("p1"); r["result"] == nil {
		t.Fatalf("prompt: %v", r)
	}
}
