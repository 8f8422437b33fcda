package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestACPLoadReplaysWhatTheUserSaw: session/load shows the session as the
// user saw it: the diffs of the edits and the plan, the interrupt as a note
// of the agent (not a message of the user), no text the host wrote for the
// model (<system>…), and the session back in the mode it was left in.
func TestACPLoadReplaysWhatTheUserSaw(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls:
      - {id: w1, name: WriteFile, arguments: {path: a.txt, content: "alpha\n"}}
      - {id: t1, name: SetTodoList, arguments: {todos: [{title: "write a", status: done}, {title: "edit a", status: in_progress}]}}
  - tool_calls:
      - {id: r1, name: StrReplaceFile, arguments: {path: a.txt, edit: {old: alpha, new: beta}}}
  - text: "Edited."
  - tool_calls: [{id: z1, name: Shell, arguments: {command: "sleep 60"}}]
  - text: never
`)
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script)
	c.initialize()
	sess := c.newSession(dir)
	if _, err := c.conn.SetSessionMode(c.ctx(), acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "yolo"}); err != nil {
		t.Fatal(err)
	}
	if res, err := c.prompt(sess.SessionId, "Write and edit a."); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "beta\n" {
		t.Fatalf("a.txt: %q %v", b, err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.prompt(sess.SessionId, "Now wait."); done <- err }()
	c.waitUpdate("tool_call z1", func(u acp.SessionUpdate) bool { return u.ToolCall != nil && u.ToolCall.ToolCallId == "z1" })
	if err := c.conn.Cancel(c.ctx(), acp.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c.stop()

	writeScript(t, script, "turns:\n  - text: \"Back.\"\n")
	c2 := startACP(t, dir, env, "--provider", "scripted", "--script", script)
	c2.initialize()
	res, err := c2.conn.LoadSession(c2.ctx(), acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: dir, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("session/load: %v", err)
	}
	if res.Modes == nil || res.Modes.CurrentModeId != "yolo" {
		t.Errorf("the session came back in mode %+v, not yolo", res.Modes)
	}
	ups := c2.takeUpdates()
	lines := summary(ups)
	for _, want := range []string{
		"user Write and edit a.",
		`tool_call_update w1 completed diff(a.txt:"alpha\n")`,
		`tool_call_update r1 completed diff(a.txt:"beta\n")`,
		"plan write a=completed,edit a=in_progress",
		"message Edited.",
		"user Now wait.",
		"tool_call_update z1 failed",
	} {
		if !hasLine(lines, want) {
			t.Errorf("replay lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if !hasLine(lines, "message \n\n(Interrupted by the user.)") {
		t.Errorf("replay does not note the interrupt:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "user ") && strings.Contains(l, "interrupted") {
			t.Errorf("the interrupt replays as the user's message: %q", l)
		}
	}
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	for _, u := range ups {
		_ = enc.Encode(u)
	}
	if strings.Contains(raw.String(), "<system>") || strings.Contains(raw.String(), "</system>") {
		t.Errorf("replay has text for the model:\n%s", raw.String())
	}
	// Yolo holds: the next call is not asked.
	if res, err := c2.prompt(sess.SessionId, "Still there?"); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt after load: %+v %v", res, err)
	}
}
