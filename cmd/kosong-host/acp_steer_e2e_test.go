package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestACPSteer: `_kosong/steer` sends a message into the running turn: the
// model sees it before its next request, the editor sees it as the user's
// message, and the turn goes on; with no turn running, a bad request or an
// unknown session it is an error.
func TestACPSteer(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	// The Shell call runs until the test creates the file "go", so the
	// steer arrives while the turn runs.
	writeScript(t, script, `turns:
  - tool_calls: [{id: z1, name: Shell, arguments: {command: "while [ ! -f go ]; do sleep 0.05; done"}}]
  - text: "Steered fine."
`)
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script, "--yolo")
	c.initialize()
	sess := c.newSession(dir)
	steer := func(params map[string]any) (json.RawMessage, error) {
		return c.conn.CallExtension(c.ctx(), "_kosong/steer", params)
	}
	for _, tt := range []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"no turn", map[string]any{"sessionId": sess.SessionId, "prompt": []acp.ContentBlock{acp.TextBlock("hi")}}, "No agent turn is in progress"},
		{"unknown session", map[string]any{"sessionId": "nope", "prompt": []acp.ContentBlock{acp.TextBlock("hi")}}, "unknown session"},
		{"no session", map[string]any{"prompt": "hi"}, `_kosong/steer needs {\"sessionId\"`},
		{"no text", map[string]any{"sessionId": sess.SessionId, "prompt": []acp.ContentBlock{}}, "the prompt has no text"},
		{"image", map[string]any{"sessionId": sess.SessionId, "prompt": []acp.ContentBlock{acp.ImageBlock("AA==", "image/png")}}, "prompt[0]: a steered message takes text"},
	} {
		if _, err := steer(tt.params); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}

	done := make(chan error, 1)
	go func() {
		res, err := c.prompt(sess.SessionId, "Wait for go.")
		if err == nil && res.StopReason != acp.StopReasonEndTurn {
			t.Errorf("stop reason %s", res.StopReason)
		}
		done <- err
	}()
	c.waitUpdate("tool_call z1", func(u acp.SessionUpdate) bool { return u.ToolCall != nil && u.ToolCall.ToolCallId == "z1" })
	raw, err := steer(map[string]any{"sessionId": sess.SessionId, "prompt": []acp.ContentBlock{acp.TextBlock("Also check B.")}})
	if err != nil || !strings.Contains(string(raw), `"status":"steered"`) {
		t.Fatalf("steer: %s %v", raw, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("prompt: %v", err)
	}
	lines := summary(c.takeUpdates())
	steered, finished, answered := -1, -1, -1
	for i, l := range lines {
		switch {
		case l == "user Also check B.":
			steered = i
		case strings.HasPrefix(l, "tool_call_update z1 completed"):
			finished = i
		case l == "message Steered fine.":
			answered = i
		}
	}
	if !(finished >= 0 && finished < steered && steered < answered) {
		t.Errorf("want the tool result, then the steered message, then the answer:\n%s", strings.Join(lines, "\n"))
	}
	home := strings.TrimPrefix(env[0], "HOME=")
	hist, err := os.ReadFile(filepath.Join(home, "state", "kosong-host", "sessions", string(sess.SessionId), "history.jsonl"))
	if err != nil || !strings.Contains(string(hist), "Also check B.") {
		t.Fatalf("the model did not get the steered message: %q %v", hist, err)
	}
}
