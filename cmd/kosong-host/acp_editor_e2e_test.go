package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestACPEditorFiles: a client that advertises fs.readTextFile and
// fs.writeTextFile gets WriteFile's write as fs/write_text_file, after the
// approval, and the disk is left to the editor; an append and
// StrReplaceFile work on the editor's buffer (unsaved text included), and
// ReadFile reads it; a
// rejected call writes nothing.
// A client that advertises nothing gets the disk written.
func TestACPEditorFiles(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls: [{id: w1, name: WriteFile, arguments: {path: a.txt, content: "alpha\n"}}]
  - tool_calls: [{id: w2, name: WriteFile, arguments: {path: b.txt, content: "more\n", mode: append}}]
  - tool_calls: [{id: r1, name: StrReplaceFile, arguments: {path: b.txt, edit: {old: "unsaved\nmore", new: "edited"}}}]
  - tool_calls: [{id: rd, name: ReadFile, arguments: {path: b.txt}}]
  - tool_calls: [{id: w3, name: WriteFile, arguments: {path: c.txt, content: "no\n"}}]
  - text: "Written."
`)
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("saved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script)
	b := filepath.Join(dir, "b.txt")
	c.files = map[string]string{b: "saved\nunsaved\n"}
	c.initializeWith(acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
	sess := c.newSession(dir)
	c.permit = func(p acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		if p.ToolCall.ToolCallId == "w3" {
			return selected("reject")
		}
		return selected("approve")
	}
	if res, err := c.prompt(sess.SessionId, "Write."); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	a := filepath.Join(dir, "a.txt")
	c.mu.Lock()
	log, files := strings.Join(c.log, "|"), c.files
	c.mu.Unlock()
	want := "permission w1|write " + a + "|permission w2|read " + b + "|write " + b +
		"|read " + b + "|permission r1|write " + b + "|read " + b + "|permission w3"
	if log != want {
		t.Errorf("the editor saw\n%s\nwant\n%s", log, want)
	}
	if files[a] != "alpha\n" || files[b] != "saved\nedited\n" {
		t.Errorf("the editor's buffers: %q", files)
	}
	for _, name := range []string{"a.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was written on the disk, not through the editor", name)
		}
	}
	if got, _ := os.ReadFile(b); string(got) != "saved\n" {
		t.Errorf("b.txt on the disk: %q", got)
	}
	lines := summary(c.takeUpdates())
	if !hasLine(lines, `tool_call_update w1 completed diff(a.txt:"alpha\n")`) || !hasLine(lines, `tool_call_update rd completed text("     1\tsaved\n     2\tedited`) {
		t.Errorf("updates:\n%s", strings.Join(lines, "\n"))
	}
}

// TestACPEditorTerminal: a client that advertises terminal gets Shell's
// command as terminal/create, after the approval, shown in the tool call
// as a terminal; its output and exit code are the call's result; a
// rejected command creates no terminal.
func TestACPEditorTerminal(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls: [{id: s1, name: Shell, arguments: {command: "echo in-the-editor > t.txt; echo shown"}}]
  - tool_calls: [{id: s2, name: Shell, arguments: {command: "exit 3"}}]
  - tool_calls: [{id: s3, name: Shell, arguments: {command: "echo rejected"}}]
  - text: "Ran."
`)
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script)
	c.terminals = map[string]fakeTerminal{}
	c.initializeWith(acp.ClientCapabilities{Terminal: true})
	sess := c.newSession(dir)
	c.permit = func(p acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		if p.ToolCall.ToolCallId == "s3" {
			return selected("reject")
		}
		return selected("approve")
	}
	if res, err := c.prompt(sess.SessionId, "Run."); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	c.mu.Lock()
	log := strings.Join(c.log, "|")
	c.mu.Unlock()
	want := "permission s1|terminal/create echo in-the-editor > t.txt; echo shown|terminal/release|" +
		"permission s2|terminal/create exit 3|terminal/release|permission s3"
	if log != want {
		t.Errorf("the editor saw\n%s\nwant\n%s", log, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "t.txt")); err != nil || string(b) != "in-the-editor\n" {
		t.Errorf("t.txt: %q %v", b, err)
	}
	ups := c.takeUpdates()
	lines := summary(ups)
	for _, w := range []string{`tool_call_update s1 completed text("shown\n")`, "tool_call_update s2 failed"} {
		if !hasLine(lines, w) {
			t.Errorf("updates lack %q:\n%s", w, strings.Join(lines, "\n"))
		}
	}
	shown := false
	for _, u := range ups {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "s1" {
			for _, c := range u.ToolCallUpdate.Content {
				shown = shown || (c.Terminal != nil && c.Terminal.TerminalId == "term-1")
			}
		}
	}
	if !shown {
		t.Errorf("the tool call does not show its terminal")
	}
}

// TestACPTerminalNotLentToSandboxedShell: a Shell confined by a sandbox
// runs its commands itself, under the sandbox, though the client lends a
// terminal: the editor's terminal would run them unconfined.
func TestACPTerminalNotLentToSandboxedShell(t *testing.T) {
	env := sandboxEnv(t)
	outside := t.TempDir()
	target := filepath.Join(outside, "y.txt")
	dir := writeFiles(t, map[string]string{"s.md": "x", "agent.yaml": `version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools:
    - {plugin: shell, tools: [Shell], sandbox: {write: [$WORK_DIR], network: none}}
`})
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls: [{id: s1, name: Shell, arguments: {command: "echo in > inside.txt; echo out > `+target+`"}}]
  - text: "Ran."
`)
	c := startACP(t, dir, env, "--trust", "--provider", "scripted", "--script", script)
	c.terminals = map[string]fakeTerminal{}
	c.initializeWith(acp.ClientCapabilities{Terminal: true})
	sess := c.newSession(dir)
	c.permit = func(acp.RequestPermissionRequest) acp.RequestPermissionResponse { return selected("approve") }
	if res, err := c.prompt(sess.SessionId, "Run."); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	c.mu.Lock()
	log := strings.Join(c.log, "|")
	c.mu.Unlock()
	if log != "permission s1" {
		t.Errorf("the editor saw %q, want only the permission (no terminal/create)", log)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "inside.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("inside.txt: %q %v", b, err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the command wrote outside the sandbox")
	}
}
