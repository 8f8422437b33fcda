package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/host/loop"
	saved "github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// The files the ACP front end keeps in a session's directory, beside its
// history, so that session/load shows what the user saw.
const (
	// displaysFile holds, a JSON line per finished tool call, the display
	// blocks (diffs, the todo list) the history does not keep.
	displaysFile = "acp-displays.jsonl"
	// stateFile holds the session's mode.
	stateFile = "acp-state.json"
)

// displayRecord is a line of displaysFile.
type displayRecord struct {
	ID      string            `json:"id"`
	Display []toolset.Display `json:"display"`
}

// sessionFiles reads and writes a session's ACP files.
type sessionFiles struct {
	mu  sync.Mutex
	dir string // "" when the session is not saved
}

// recordDisplay keeps the diff and todo blocks of a finished call.
func (f *sessionFiles) recordDisplay(id string, ds []toolset.Display) error {
	var keep []toolset.Display
	for _, d := range ds {
		if d.Kind == "diff" || d.Kind == "todo" {
			keep = append(keep, d)
		}
	}
	if f.dir == "" || len(keep) == 0 {
		return nil
	}
	line, err := json.Marshal(displayRecord{ID: id, Display: keep})
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fh, err := os.OpenFile(filepath.Join(f.dir, displaysFile), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := fh.Write(append(line, '\n')); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// displays are the recorded display blocks by tool call id; a missing or
// damaged file gives what could be read.
func (f *sessionFiles) displays() map[string][]toolset.Display {
	out := map[string][]toolset.Display{}
	if f.dir == "" {
		return out
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fh, err := os.Open(filepath.Join(f.dir, displaysFile))
	if err != nil {
		return out
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		var r displayRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.ID != "" {
			out[r.ID] = r.Display
		}
	}
	return out
}

type savedState struct {
	Mode string `json:"mode"`
}

func (f *sessionFiles) saveMode(mode string) error {
	if f.dir == "" {
		return nil
	}
	b, _ := json.Marshal(savedState{Mode: mode})
	f.mu.Lock()
	defer f.mu.Unlock()
	return os.WriteFile(filepath.Join(f.dir, stateFile), b, 0o600)
}

// mode is the saved mode, "" when none was saved.
func (f *sessionFiles) mode() string {
	if f.dir == "" {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := os.ReadFile(filepath.Join(f.dir, stateFile))
	if err != nil {
		return ""
	}
	var s savedState
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	return s.Mode
}

// interruptedText is how session/load shows an interrupted turn.
const interruptedText = "\n\n(Interrupted by the user.)\n\n"

// compactedText is how session/load shows where the history was compacted.
const compactedText = "(The earlier part of this conversation was compacted.)\n"

// replay sends a saved history as updates, as the user saw it: the user's
// messages (steered ones too), the agent's text and reasoning, each tool
// call with its result, diffs and plan, and notes where the turn was
// interrupted or the history compacted. The texts the host writes for the
// model (<system> notes) are left out.
func (u *updates) replay(ctx context.Context, history []providers.Message, displays map[string][]toolset.Display) {
	calls := map[string]providers.ToolCall{}
	for _, m := range history {
		switch m.Role {
		case providers.RoleUser:
			u.replayUser(ctx, m)
		case providers.RoleAssistant:
			if m.Reasoning != "" {
				u.send(ctx, acpsdk.UpdateAgentThoughtText(m.Reasoning))
			}
			if t := m.Text(); t != "" {
				u.send(ctx, acpsdk.UpdateAgentMessageText(t))
			}
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
				u.send(ctx, u.startToolCall(c, acpsdk.ToolCallStatusInProgress))
			}
		case providers.RoleTool:
			r := toolset.Result{ToolCallID: m.ToolCallID, Display: displays[m.ToolCallID]}
			if m.IsError {
				r.Kind = toolset.Failed
			}
			if r.Display == nil {
				r.Display = displayFromArguments(calls[m.ToolCallID])
			}
			if t := userText(m); t != "" {
				r.Output = []providers.ContentPart{providers.TextPart(t)}
			}
			for _, up := range finishToolCall(providers.ToolCall{ID: m.ToolCallID}, r) {
				u.send(ctx, up)
			}
		}
	}
}

func (u *updates) replayUser(ctx context.Context, m providers.Message) {
	if len(m.Content) == 0 {
		return
	}
	first := m.Content[0]
	parts := m.Content
	switch {
	case first.Type == providers.PartText && first.Text == loop.SteeredNote:
		parts = parts[1:]
	case first.Type == providers.PartText && strings.HasPrefix(first.Text, loop.InterruptedNote):
		u.send(ctx, acpsdk.UpdateAgentMessageText(interruptedText))
		return
	case first.Type == providers.PartText && strings.HasPrefix(first.Text, loop.SummaryPrefix):
		u.send(ctx, acpsdk.UpdateAgentThoughtText(compactedText))
		return
	case first.Type == providers.PartText && strings.HasPrefix(first.Text, saved.NotePrefix):
		// Another note of the host's, for the model.
		return
	}
	for _, p := range parts {
		switch {
		case p.Type == providers.PartText && p.Text != "" && !strings.HasPrefix(p.Text, saved.NotePrefix):
			u.send(ctx, acpsdk.UpdateUserMessageText(p.Text))
		case p.Type == providers.PartImage:
			if media, data, ok := providers.ParseDataURL(p.ImageURL); ok {
				u.send(ctx, acpsdk.SessionUpdate{UserMessageChunk: &acpsdk.SessionUpdateUserMessageChunk{
					Content: acpsdk.ImageBlock(data, media)}})
			}
		}
	}
}

// userText is a tool message's text without the host's notes for the
// model: a <system>…</system> part loses its tags (an error's text stays),
// and the note of an empty output goes.
func userText(m providers.Message) string {
	var out []string
	for _, p := range m.Content {
		if p.Type != providers.PartText {
			continue
		}
		t := p.Text
		if t == "<system>Tool output is empty.</system>" {
			continue
		}
		for {
			i := strings.Index(t, "<system>")
			if i < 0 {
				break
			}
			j := strings.Index(t[i:], "</system>")
			if j < 0 {
				t = t[:i] + t[i+len("<system>"):]
				break
			}
			t = t[:i] + t[i+len("<system>"):i+j] + t[i+j+len("</system>"):]
		}
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n")
}

// displayFromArguments is the display a file edit or a todo list had, from
// the call's arguments, for a call whose display was not recorded (a
// session run in the terminal): the written text of WriteFile, the
// replaced strings of StrReplaceFile, SetTodoList's items.
func displayFromArguments(call providers.ToolCall) []toolset.Display {
	var args map[string]any
	if json.Unmarshal([]byte(call.Arguments), &args) != nil {
		return nil
	}
	diff := func(path, old, new string) []toolset.Display {
		b, _ := json.Marshal(map[string]string{"path": path, "old_text": old, "new_text": new})
		return []toolset.Display{{Kind: "diff", Data: b}}
	}
	path, _ := args["path"].(string)
	switch call.Name {
	case "WriteFile":
		if c, ok := args["content"].(string); ok && path != "" {
			return diff(path, "", c)
		}
	case "StrReplaceFile":
		var a struct {
			Path string          `json:"path"`
			Edit json.RawMessage `json:"edit"`
		}
		if json.Unmarshal([]byte(call.Arguments), &a) != nil || a.Path == "" {
			return nil
		}
		type edit struct {
			Old string `json:"old"`
			New string `json:"new"`
		}
		var edits []edit
		var one edit
		if json.Unmarshal(a.Edit, &edits) != nil {
			if json.Unmarshal(a.Edit, &one) != nil {
				return nil
			}
			edits = []edit{one}
		}
		var out []toolset.Display
		for _, e := range edits {
			out = append(out, diff(a.Path, e.Old, e.New)...)
		}
		return out
	case "SetTodoList":
		var a struct {
			Todos json.RawMessage `json:"todos"`
		}
		if json.Unmarshal([]byte(call.Arguments), &a) != nil || a.Todos == nil {
			return nil
		}
		b, _ := json.Marshal(map[string]json.RawMessage{"items": a.Todos})
		return []toolset.Display{{Kind: "todo", Data: b}}
	}
	return nil
}
