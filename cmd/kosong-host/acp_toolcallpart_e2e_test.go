package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestACPToolCallPendingWhileStreaming: a call the model streams reaches
// the editor as a pending tool_call at its first part, then, once
// complete, a tool_call_update in progress with its title and location;
// a call whose response broke mid-way (the step is retried) is marked
// failed.
func TestACPToolCallPendingWhileStreaming(t *testing.T) {
	srv := openaitest.NewServer(t,
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "r1", Name: "ReadFile", Arguments: `{"path":"notes.txt"}`}},
			Quirks: openaitest.Quirks{SplitArguments: 3}, BreakAfter: 3},
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "r2", Name: "ReadFile", Arguments: `{"path":"notes.txt"}`}},
			Quirks: openaitest.Quirks{SplitArguments: 3}},
		openaitest.Response{Text: []string{"Read."}})
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
	c := startACP(t, dir, env, "--model", "local", "--yolo")
	c.initialize()
	sess := c.newSession(dir)
	if res, err := c.prompt(sess.SessionId, "read notes"); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	var got []string
	for _, up := range c.takeUpdates() {
		switch {
		case up.ToolCall != nil:
			got = append(got, fmt.Sprintf("tool_call %s %s %s", up.ToolCall.ToolCallId, up.ToolCall.Status, up.ToolCall.Title))
		case up.ToolCallUpdate != nil:
			u := up.ToolCallUpdate
			s := fmt.Sprintf("update %s", u.ToolCallId)
			if u.Status != nil {
				s += " " + string(*u.Status)
			}
			if u.Title != nil {
				s += " " + *u.Title
			}
			if len(u.Locations) > 0 {
				s += " at " + filepath.Base(u.Locations[0].Path)
			}
			got = append(got, s)
		}
	}
	want := []string{
		"tool_call r1 pending ReadFile",
		"update r1 failed",
		"tool_call r2 pending ReadFile",
		"update r2 in_progress ReadFile: notes.txt at notes.txt",
		"update r2 completed",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool call updates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
