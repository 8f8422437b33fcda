package acp

import (
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func TestStartToolCall(t *testing.T) {
	tests := []struct {
		name, args string
		kind       acpsdk.ToolKind
		title      string
		location   string
	}{
		{"Shell", `{"command":"make   test"}`, acpsdk.ToolKindExecute, "Shell: make test", ""},
		{"ReadFile", `{"path":"/src/a.go"}`, acpsdk.ToolKindRead, "ReadFile: /src/a.go", "/src/a.go"},
		{"StrReplaceFile", `{"path":"b.go"}`, acpsdk.ToolKindEdit, "StrReplaceFile: b.go", ""},
		{"Grep", `{"pattern":"x"}`, acpsdk.ToolKindSearch, "Grep: x", ""},
		{"Lookup", `not json`, acpsdk.ToolKindOther, "Lookup", ""},
	}
	for _, tt := range tests {
		up := startToolCall(providers.ToolCall{ID: "c1", Name: tt.name, Arguments: tt.args}, acpsdk.ToolCallStatusInProgress)
		tc := up.ToolCall
		if tc == nil || tc.Kind != tt.kind || tc.Title != tt.title || tc.Status != acpsdk.ToolCallStatusInProgress {
			t.Errorf("%s: %+v", tt.name, tc)
			continue
		}
		if got := len(tc.Locations); (tt.location == "") != (got == 0) || (got > 0 && tc.Locations[0].Path != tt.location) {
			t.Errorf("%s: locations %+v", tt.name, tc.Locations)
		}
	}
}

func TestFinishToolCall(t *testing.T) {
	r := toolset.Result{Output: []providers.ContentPart{providers.TextPart("wrote")}, Display: []toolset.Display{
		{Kind: "diff", Data: json.RawMessage(`{"path":"/w/a.txt","old_text":"a","new_text":"b"}`)},
		{Kind: "todo", Data: json.RawMessage(`{"items":[{"title":"one","status":"done"},{"title":"two","status":"pending"}]}`)},
	}}
	ups := finishToolCall(providers.ToolCall{ID: "c1", Name: "SetTodoList"}, r)
	if len(ups) != 2 || ups[0].ToolCallUpdate == nil || ups[1].Plan == nil {
		t.Fatalf("updates %+v", ups)
	}
	u := ups[0].ToolCallUpdate
	if *u.Status != acpsdk.ToolCallStatusCompleted || len(u.Content) != 2 || u.Content[0].Diff == nil ||
		u.Content[0].Diff.NewText != "b" || *u.Content[0].Diff.OldText != "a" || u.Content[1].Content.Content.Text.Text != "wrote" {
		t.Fatalf("update %+v", u)
	}
	p := ups[1].Plan.Entries
	if len(p) != 2 || p[0].Status != acpsdk.PlanEntryStatusCompleted || p[1].Status != acpsdk.PlanEntryStatusPending || p[0].Content != "one" {
		t.Fatalf("plan %+v", p)
	}
	failed := finishToolCall(providers.ToolCall{ID: "c2"}, toolset.RejectedResult(""))
	if *failed[0].ToolCallUpdate.Status != acpsdk.ToolCallStatusFailed ||
		!strings.Contains(failed[0].ToolCallUpdate.Content[0].Content.Content.Text.Text, "rejected by the user") {
		t.Fatalf("rejected %+v", failed[0].ToolCallUpdate)
	}
}

// TestDiffHunksWithNote: a large edit's hunks are diffs, and the note of
// what they leave out follows them as text, in results and approvals.
func TestDiffHunksWithNote(t *testing.T) {
	blocks := []toolset.Display{
		{Kind: "diff", Data: json.RawMessage(`{"path":"/w/a.txt","old_text":"a\n","new_text":"b\n","old_start":7,"new_start":7}`)},
		{Kind: "diff", Data: json.RawMessage(`{"path":"/w/a.txt","old_text":"c\n","new_text":"d\n","old_start":90,"new_start":90,"note":"⋯ 98 unchanged lines not shown ⋯"}`)},
	}
	u := finishToolCall(providers.ToolCall{ID: "c1", Name: "StrReplaceFile"}, toolset.Result{Display: blocks})[0].ToolCallUpdate
	if len(u.Content) != 3 || u.Content[0].Diff == nil || u.Content[1].Diff == nil || u.Content[1].Diff.NewText != "d\n" ||
		u.Content[2].Content == nil || u.Content[2].Content.Content.Text.Text != "⋯ 98 unchanged lines not shown ⋯" {
		t.Fatalf("update %+v", u.Content)
	}
	shown := displayContent([]approval.Display{{Kind: blocks[0].Kind, Data: blocks[0].Data}, {Kind: blocks[1].Kind, Data: blocks[1].Data}})
	if len(shown) != 3 || shown[2].Content == nil || shown[2].Content.Content.Text.Text != "⋯ 98 unchanged lines not shown ⋯" {
		t.Fatalf("approval content %+v", shown)
	}
}

func TestMCPServersAndPrompt(t *testing.T) {
	got, err := mcpServers([]acpsdk.McpServer{
		{Stdio: &acpsdk.McpServerStdio{Name: "fs", Command: "/bin/fs", Args: []string{"-v"}, Env: []acpsdk.EnvVariable{{Name: "K", Value: "V"}}}},
		{Http: &acpsdk.McpServerHttpInline{Name: "web", Url: "http://x/mcp", Headers: []acpsdk.HttpHeader{{Name: "A", Value: "B"}}}},
	})
	if err != nil || len(got) != 2 || got[0].Env["K"] != "V" || !got[0].Prefix || got[1].URL != "http://x/mcp" || got[1].Headers["A"] != "B" {
		t.Fatalf("servers %+v, %v", got, err)
	}
	if _, err := mcpServers([]acpsdk.McpServer{{Stdio: &acpsdk.McpServerStdio{Command: "x"}}}); err == nil || !strings.Contains(err.Error(), "needs a name") {
		t.Fatalf("nameless server: %v", err)
	}
	text := promptText([]acpsdk.ContentBlock{acpsdk.TextBlock("Fix it."), acpsdk.ResourceLinkBlock("a.go", "file:///w/a.go")})
	if text != "Fix it.\n\n@a.go (file:///w/a.go)" {
		t.Fatalf("prompt %q", text)
	}
}
