package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestACPSlashCommands: the session's commands (built-in and custom) are
// advertised with available_commands_update, and a prompt /compact
// compacts the history instead of reaching the model as a prompt.
func TestACPSlashCommands(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	if err := os.MkdirAll(filepath.Join(dir, ".kosong", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".kosong", "commands", "greet.md"), []byte("---\ndescription: say hello\n---\nSay hello to $ARGUMENTS."), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - text: "one"
  - text: "two"
  - text: "The summary."
  - text: "Hello, Ann."
`)
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script)
	c.initialize()
	sess := c.newSession(dir)
	var cmds []acp.AvailableCommand
	c.waitUpdate("available_commands_update", func(u acp.SessionUpdate) bool {
		if u.AvailableCommandsUpdate != nil {
			cmds = u.AvailableCommandsUpdate.AvailableCommands
			return true
		}
		return false
	})
	byName := map[string]acp.AvailableCommand{}
	for _, cmd := range cmds {
		byName[cmd.Name] = cmd
	}
	for _, want := range []string{"compact", "clear", "model", "plan", "undo", "init", "export", "greet"} {
		if _, ok := byName[want]; !ok {
			t.Errorf("available commands lack %s: %+v", want, cmds)
		}
	}
	if g := byName["greet"]; g.Description != "say hello" || g.Input == nil || g.Input.Unstructured == nil {
		t.Errorf("greet advertised as %+v", g)
	}
	for _, p := range []string{"first", "second"} {
		if res, err := c.prompt(sess.SessionId, p); err != nil || res.StopReason != acp.StopReasonEndTurn {
			t.Fatalf("prompt %s: %+v, %v", p, res, err)
		}
	}
	c.takeUpdates()
	res, err := c.prompt(sess.SessionId, "/compact keep the names")
	if err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("/compact: %+v, %v", res, err)
	}
	lines := summary(c.takeUpdates())
	if !hasLine(lines, "message History compacted") {
		t.Fatalf("/compact updates %q, want the compaction's message", lines)
	}
	// A custom command sends its prompt as a turn.
	if res, err := c.prompt(sess.SessionId, "/greet Ann"); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("/greet: %+v, %v", res, err)
	}
	if lines := summary(c.takeUpdates()); !hasLine(lines, "message Hello, Ann.") {
		t.Fatalf("/greet updates %q", lines)
	}
	c.stop()
}

// TestACPPlanMode: the session mode plan runs ReadFile (read-only) and
// refuses WriteFile (nothing is
// written, no permission asked) until the model's ExitPlanMode is
// approved, which leaves plan mode.
func TestACPPlanMode(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls:
      - {id: r1, name: ReadFile, arguments: {path: notes.txt}}
      - {id: w1, name: WriteFile, arguments: {path: a.txt, content: "alpha\n"}}
  - tool_calls:
      - {id: x1, name: ExitPlanMode, arguments: {plan: "Write a.txt.", options: [{label: Small}, {label: Big}]}}
  - tool_calls:
      - {id: w2, name: WriteFile, arguments: {path: a.txt, content: "alpha\n"}}
  - text: "Done."
`)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("read me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script)
	c.initialize()
	sess := c.newSession(dir)
	var ids []string
	for _, m := range sess.Modes.AvailableModes {
		ids = append(ids, string(m.Id))
	}
	if strings.Join(ids, ",") != "ask,yolo,plan" {
		t.Fatalf("modes %v, want ask,yolo,plan", ids)
	}
	if _, err := c.conn.SetSessionMode(c.ctx(), acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	c.permit = func(p acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		return selected("approve")
	}
	res, err := c.prompt(sess.SessionId, "Plan the file.")
	if err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	lines := summary(c.takeUpdates())
	for _, want := range []string{"mode plan", "tool_call_update r1 completed", "tool_call_update w1 failed", "tool_call_update x1 completed", "mode ask", "tool_call_update w2 completed"} {
		if !hasLine(lines, want) {
			t.Errorf("updates lack %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	c.mu.Lock()
	asked := strings.Join(c.asked, ",")
	c.mu.Unlock()
	if asked != "x1,w2" {
		t.Errorf("permission asked for %q, want x1 (the plan), then w2", asked)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(data) != "alpha\n" {
		t.Errorf("a.txt after the approved plan: %q, %v", data, err)
	}
	c.stop()
}
