package acp

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
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
		{"ReadFile", `{"path":"sub/../a.go"}`, acpsdk.ToolKindRead, "ReadFile: sub/../a.go", "/work/a.go"},
		{"ReadMediaFile", `{"path":"p.png"}`, acpsdk.ToolKindRead, "ReadMediaFile: p.png", "/work/p.png"},
		{"WriteFile", `{"path":"w.txt","content":"x"}`, acpsdk.ToolKindEdit, "WriteFile: w.txt", "/work/w.txt"},
		{"StrReplaceFile", `{"path":"b.go"}`, acpsdk.ToolKindEdit, "StrReplaceFile: b.go", "/work/b.go"},
		{"Grep", `{"pattern":"x"}`, acpsdk.ToolKindSearch, "Grep: x", "/work"},
		{"Grep", `{"pattern":"x","path":"src"}`, acpsdk.ToolKindSearch, "Grep: src", "/work/src"},
		{"Glob", `{"pattern":"*.go"}`, acpsdk.ToolKindSearch, "Glob: *.go", "/work"},
		{"Glob", `{"pattern":"*.go","directory":"/etc"}`, acpsdk.ToolKindSearch, "Glob: *.go", "/etc"},
		{"WriteFile", `{"content":"no path"}`, acpsdk.ToolKindEdit, "WriteFile", ""},
		{"Shell", `{"command":"cat a","path":"a"}`, acpsdk.ToolKindExecute, "Shell: cat a", ""},
		{"Lookup", `not json`, acpsdk.ToolKindOther, "Lookup", ""},
	}
	u := &updates{session: &session{cwd: "/work"}}
	for _, tt := range tests {
		up := u.startToolCall(providers.ToolCall{ID: "c1", Name: tt.name, Arguments: tt.args}, acpsdk.ToolCallStatusInProgress)
		tc := up.ToolCall
		if tc == nil || tc.Kind != tt.kind || tc.Title != tt.title || tc.Status != acpsdk.ToolCallStatusInProgress {
			t.Errorf("%s: %+v", tt.name, tc)
			continue
		}
		if got := len(tc.Locations); (tt.location == "") != (got == 0) || (got > 0 && tc.Locations[0].Path != tt.location) {
			t.Errorf("%s %s: locations %+v, want %q", tt.name, tt.args, tc.Locations, tt.location)
		}
	}
	up := u.startToolCall(providers.ToolCall{ID: "c1", Name: "ReadFile", Arguments: `{"path":"a.go","line_offset":40}`}, acpsdk.ToolCallStatusInProgress)
	if l := up.ToolCall.Locations; len(l) != 1 || l[0].Line == nil || *l[0].Line != 40 {
		t.Errorf("ReadFile at line 40: %+v", l)
	}
}

func TestUserText(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"plain", []string{"out"}, "out"},
		{"note", []string{"<system>Todo list updated.</system>"}, "Todo list updated."},
		{"error", []string{"<system>ERROR: no such file</system>\n", "partial"}, "ERROR: no such file\npartial"},
		{"empty", []string{"<system>Tool output is empty.</system>"}, ""},
		{"unclosed", []string{"<system>half"}, "half"},
	}
	for _, tt := range tests {
		m := providers.Message{Role: providers.RoleTool}
		for _, p := range tt.in {
			m.Content = append(m.Content, providers.TextPart(p))
		}
		if got := userText(m); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDisplayFromArguments(t *testing.T) {
	tests := []struct {
		name, args string
		want       string
	}{
		{"WriteFile", `{"path":"a","content":"x"}`, `diff:{"new_text":"x","old_text":"","path":"a"}`},
		{"StrReplaceFile", `{"path":"a","edit":{"old":"o","new":"n"}}`, `diff:{"new_text":"n","old_text":"o","path":"a"}`},
		{"StrReplaceFile", `{"path":"a","edit":[{"old":"o","new":"n"},{"old":"p","new":"q"}]}`,
			`diff:{"new_text":"n","old_text":"o","path":"a"} diff:{"new_text":"q","old_text":"p","path":"a"}`},
		{"StrReplaceFile", `{"path":"a","edit":7}`, ``},
		{"SetTodoList", `{"todos":[{"title":"t","status":"done"}]}`, `todo:{"items":[{"title":"t","status":"done"}]}`},
		{"WriteFile", `not json`, ``},
		{"Shell", `{"command":"x"}`, ``},
	}
	for _, tt := range tests {
		var got []string
		for _, d := range displayFromArguments(providers.ToolCall{Name: tt.name, Arguments: tt.args}) {
			got = append(got, d.Kind+":"+string(d.Data))
		}
		if s := strings.Join(got, " "); s != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.name, tt.args, s, tt.want)
		}
	}
}

func TestSessionFiles(t *testing.T) {
	f := &sessionFiles{dir: t.TempDir()}
	if f.mode() != "" || len(f.displays()) != 0 {
		t.Fatal("a new session has a mode or displays")
	}
	if err := f.saveMode(ModeYolo); err != nil || f.mode() != ModeYolo {
		t.Fatalf("mode %q, %v", f.mode(), err)
	}
	diff := toolset.Display{Kind: "diff", Data: json.RawMessage(`{"path":"a"}`)}
	if err := f.recordDisplay("c1", []toolset.Display{{Kind: "brief", Data: json.RawMessage(`{}`)}, diff}); err != nil {
		t.Fatal(err)
	}
	if err := f.recordDisplay("c2", []toolset.Display{{Kind: "brief", Data: json.RawMessage(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	got := f.displays()
	if len(got) != 1 || len(got["c1"]) != 1 || got["c1"][0].Kind != "diff" {
		t.Fatalf("displays %+v", got)
	}
	// An unsaved session keeps nothing; a directory that went away is an error.
	none := &sessionFiles{}
	if none.recordDisplay("c1", []toolset.Display{diff}) != nil || none.saveMode(ModeYolo) != nil || none.mode() != "" {
		t.Fatal("an unsaved session kept something")
	}
	gone := &sessionFiles{dir: filepath.Join(t.TempDir(), "gone")}
	if gone.recordDisplay("c1", []toolset.Display{diff}) == nil || gone.saveMode(ModeYolo) == nil {
		t.Fatal("writing into a missing directory did not fail")
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

func TestPromptContent(t *testing.T) {
	png := "iVBORw0KGgo="
	blob := acpsdk.EmbeddedResourceResource{BlobResourceContents: &acpsdk.BlobResourceContents{Uri: "file:///w/p.png", Blob: png, MimeType: acpsdk.Ptr("image/png")}}
	tests := []struct {
		name   string
		blocks []acpsdk.ContentBlock
		images bool
		want   string // the parts, or the error's text
	}{
		{"text", []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}, false, "text:hi"},
		{"image", []acpsdk.ContentBlock{acpsdk.TextBlock("see"), acpsdk.ImageBlock(png, "image/png")}, true,
			"text:see image_url:data:image/png;base64," + png},
		{"image only", []acpsdk.ContentBlock{acpsdk.ImageBlock(png, "image/png")}, true, "image_url:data:image/png;base64," + png},
		{"embedded image", []acpsdk.ContentBlock{acpsdk.TextBlock("see"), {Resource: &acpsdk.ContentBlockResource{Resource: blob}}}, true,
			"text:see image_url:data:image/png;base64," + png},
		{"no images", []acpsdk.ContentBlock{acpsdk.TextBlock("see"), acpsdk.ImageBlock(png, "image/png")}, false,
			"prompt[1]: the model does not take images"},
		{"not an image", []acpsdk.ContentBlock{acpsdk.ImageBlock(png, "text/plain")}, true, "prompt[0]: an image needs an image/* mimeType"},
		{"not base64", []acpsdk.ContentBlock{acpsdk.ImageBlock("%%%", "image/png")}, true, "prompt[0]: the image data is not base64"},
		{"empty", []acpsdk.ContentBlock{acpsdk.TextBlock("  ")}, true, "the prompt has no text"},
	}
	for _, tt := range tests {
		parts, err := promptContent(tt.blocks, tt.images)
		var got []string
		for _, p := range parts {
			got = append(got, string(p.Type)+":"+p.Text+p.ImageURL)
		}
		s := strings.Join(got, " ")
		if err != nil {
			s = err.Error()
		}
		if !strings.HasPrefix(s, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, s, tt.want)
		}
	}
}

// A call the model is streaming is sent as a pending tool_call at its first
// part (later parts send nothing); once complete it is a tool_call_update
// in progress with its title, input and locations. A call without parts
// is a tool_call in progress, as before.
func TestToolCallAnnouncedWhileStreaming(t *testing.T) {
	u := &updates{session: &session{cwd: "/work"}}
	up, ok := u.announce(loop.ToolCallPart{Step: 1, ToolCallID: "c1", ToolName: "WriteFile", ArgumentsPart: `{"pa`})
	if !ok || up.ToolCall == nil || up.ToolCall.Status != acpsdk.ToolCallStatusPending || up.ToolCall.Title != "WriteFile" ||
		up.ToolCall.Kind != acpsdk.ToolKindEdit {
		t.Fatalf("first part: %v %+v", ok, up.ToolCall)
	}
	if _, ok := u.announce(loop.ToolCallPart{Step: 1, ToolCallID: "c1", ToolName: "WriteFile", ArgumentsPart: `th":"w.txt"}`}); ok {
		t.Error("a second part sent an update")
	}
	up = u.callStarted(providers.ToolCall{ID: "c1", Name: "WriteFile", Arguments: `{"path":"w.txt"}`})
	tu := up.ToolCallUpdate
	if up.ToolCall != nil || tu == nil || tu.Status == nil || *tu.Status != acpsdk.ToolCallStatusInProgress ||
		tu.Title == nil || *tu.Title != "WriteFile: w.txt" || len(tu.Locations) != 1 || tu.Locations[0].Path != "/work/w.txt" || tu.RawInput == nil {
		t.Fatalf("started after parts: %+v", up)
	}
	up = u.callStarted(providers.ToolCall{ID: "c2", Name: "Shell", Arguments: `{"command":"ls"}`})
	if up.ToolCall == nil || up.ToolCall.Status != acpsdk.ToolCallStatusInProgress || up.ToolCall.Title != "Shell: ls" {
		t.Fatalf("started without parts: %+v", up)
	}
	// The same id in a later step is a new call.
	if _, ok := u.announce(loop.ToolCallPart{Step: 2, ToolCallID: "c1", ToolName: "ReadFile"}); !ok {
		t.Error("a call id seen in an earlier step was not announced again")
	}
}
