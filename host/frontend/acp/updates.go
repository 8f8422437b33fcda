package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// updates sends a session's loop events as session/update notifications.
type updates struct {
	conn    *acpsdk.AgentSideConnection
	session *session
	logger  hclog.Logger

	mu sync.Mutex
	// announced are the tool calls sent as pending while the model
	// streamed them (loop.ToolCallPart), not started yet.
	announced map[string]bool
}

func (u *updates) send(ctx context.Context, up acpsdk.SessionUpdate) {
	if err := u.conn.SessionUpdate(ctx, acpsdk.SessionNotification{SessionId: acpsdk.SessionId(u.session.id), Update: up}); err != nil {
		u.logger.Debug("acp: session update not sent", "error", err)
	}
}

// Observe implements loop.Observer.
func (u *updates) Observe(e loop.Event) {
	ctx := context.Background()
	switch e := e.(type) {
	case loop.TextDelta:
		u.send(ctx, acpsdk.UpdateAgentMessageText(e.Text))
	case loop.ReasoningDelta:
		u.send(ctx, acpsdk.UpdateAgentThoughtText(e.Text))
	case loop.ToolCallPart:
		if up, ok := u.announce(e); ok {
			u.send(ctx, up)
		}
	case loop.ToolCallStarted:
		u.send(ctx, u.callStarted(e.Call))
	case loop.ToolCallFinished:
		if err := u.session.files.recordDisplay(e.Call.ID, e.Result.Display); err != nil {
			u.logger.Warn("acp: the display of a tool call was not saved for session/load", "error", err)
		}
		for _, up := range finishToolCall(e.Call, e.Result) {
			u.send(ctx, up)
		}
	case loop.ToolProgress:
		msg := e.Message
		if msg == "" {
			msg = fmt.Sprintf("%g", e.Progress)
			if e.Total > 0 {
				msg += fmt.Sprintf("/%g", e.Total)
			}
		}
		u.send(ctx, acpsdk.UpdateToolCall(acpsdk.ToolCallId(e.ToolCallID),
			acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(msg))})))
	case loop.PlanModeChanged:
		u.planModeChanged(ctx)
	case loop.Steered:
		// A steered message entered the turn: the editor shows it as the
		// user's, where the model sees it.
		for _, t := range e.Texts {
			u.send(ctx, acpsdk.UpdateUserMessageText(t))
		}
	case loop.StepRetried:
		u.abandon(ctx)
		u.send(ctx, acpsdk.UpdateAgentThoughtText(fmt.Sprintf("\n(the model request failed: %v; retrying in %s)\n", e.Err, e.Delay.Round(1e6))))
	case loop.StepInterrupted, loop.TurnEnded:
		u.abandon(ctx)
	}
}

// toolKind is the ACP kind of a tool, by its name.
func toolKind(name string) acpsdk.ToolKind {
	switch name {
	case "ReadFile", "ReadMediaFile":
		return acpsdk.ToolKindRead
	case "WriteFile", "StrReplaceFile":
		return acpsdk.ToolKindEdit
	case "Glob", "Grep":
		return acpsdk.ToolKindSearch
	case "Shell":
		return acpsdk.ToolKindExecute
	case "Think", "SetTodoList":
		return acpsdk.ToolKindThink
	case "FetchURL", "SearchWeb":
		return acpsdk.ToolKindFetch
	}
	return acpsdk.ToolKindOther
}

// title is a tool call's one-line title: the tool and its main argument.
func title(call providers.ToolCall, args map[string]any) string {
	for _, key := range []string{"command", "path", "pattern", "url", "query", "subagent"} {
		if v, ok := args[key].(string); ok && v != "" {
			v = strings.Join(strings.Fields(v), " ")
			if r := []rune(v); len(r) > 80 {
				v = string(r[:79]) + "…"
			}
			return call.Name + ": " + v
		}
	}
	return call.Name
}

// announce is the pending tool_call for the first part of a call the
// model is streaming (its title the tool's name: the arguments are not
// complete); false for the call's later parts.
func (u *updates) announce(p loop.ToolCallPart) (acpsdk.SessionUpdate, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.announced[p.ToolCallID] {
		return acpsdk.SessionUpdate{}, false
	}
	if u.announced == nil {
		u.announced = map[string]bool{}
	}
	u.announced[p.ToolCallID] = true
	return acpsdk.StartToolCall(acpsdk.ToolCallId(p.ToolCallID), p.ToolName,
		acpsdk.WithStartKind(toolKind(p.ToolName)), acpsdk.WithStartStatus(acpsdk.ToolCallStatusPending)), true
}

// abandon fails the calls announced as pending that never started: the
// response streaming them failed or was interrupted.
func (u *updates) abandon(ctx context.Context) {
	u.mu.Lock()
	ids := make([]string, 0, len(u.announced))
	for id := range u.announced {
		ids = append(ids, id)
	}
	u.announced = nil
	u.mu.Unlock()
	slices.Sort(ids)
	for _, id := range ids {
		u.send(ctx, acpsdk.UpdateToolCall(acpsdk.ToolCallId(id), acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusFailed)))
	}
}

// callStarted is the update for a complete call handed to its tool: a
// tool_call in progress, or, for a call announced as pending, a
// tool_call_update with its title, input and locations.
func (u *updates) callStarted(call providers.ToolCall) acpsdk.SessionUpdate {
	u.mu.Lock()
	announced := u.announced[call.ID]
	delete(u.announced, call.ID)
	u.mu.Unlock()
	if !announced {
		return u.startToolCall(call, acpsdk.ToolCallStatusInProgress)
	}
	start := u.startToolCall(call, acpsdk.ToolCallStatusInProgress).ToolCall
	opts := []acpsdk.ToolCallUpdateOpt{acpsdk.WithUpdateTitle(start.Title), acpsdk.WithUpdateKind(start.Kind),
		acpsdk.WithUpdateStatus(acpsdk.ToolCallStatusInProgress)}
	if start.RawInput != nil {
		opts = append(opts, acpsdk.WithUpdateRawInput(start.RawInput))
	}
	if len(start.Locations) > 0 {
		opts = append(opts, acpsdk.WithUpdateLocations(start.Locations))
	}
	return acpsdk.UpdateToolCall(acpsdk.ToolCallId(call.ID), opts...)
}

func (u *updates) startToolCall(call providers.ToolCall, status acpsdk.ToolCallStatus) acpsdk.SessionUpdate {
	var args map[string]any
	_ = json.Unmarshal([]byte(call.Arguments), &args)
	opts := []acpsdk.ToolCallStartOpt{acpsdk.WithStartKind(toolKind(call.Name)), acpsdk.WithStartStatus(status)}
	if args != nil {
		opts = append(opts, acpsdk.WithStartRawInput(args))
	}
	if locs := locations(u.session.cwd, call.Name, args); len(locs) > 0 {
		opts = append(opts, acpsdk.WithStartLocations(locs))
	}
	return acpsdk.StartToolCall(acpsdk.ToolCallId(call.ID), title(call, args), opts...)
}

// locations are the files a tool call works on, for the editor to follow:
// the path of a file tool (ReadFile, ReadMediaFile, WriteFile,
// StrReplaceFile), the file or folder Grep searches and the folder Glob
// lists (the session's folder when none is given); a relative path is
// resolved against cwd, the session's folder, as the tools resolve it.
// Other tools name no path: none.
func locations(cwd, tool string, args map[string]any) []acpsdk.ToolCallLocation {
	key := "path"
	switch tool {
	case "ReadFile", "ReadMediaFile", "WriteFile", "StrReplaceFile", "Grep":
	case "Glob":
		key = "directory"
	default:
		return nil
	}
	p, _ := args[key].(string)
	if p == "" {
		if tool != "Glob" && tool != "Grep" {
			return nil
		}
		p = cwd
	}
	if strings.HasPrefix(p, "~/") {
		return []acpsdk.ToolCallLocation{{Path: p}}
	}
	if !filepath.IsAbs(p) {
		if cwd == "" {
			return nil
		}
		p = filepath.Join(cwd, p)
	}
	loc := acpsdk.ToolCallLocation{Path: filepath.Clean(p)}
	if tool == "ReadFile" {
		if n, ok := args["line_offset"].(float64); ok && n >= 1 {
			loc.Line = acpsdk.Ptr(int(n))
		}
	}
	return []acpsdk.ToolCallLocation{loc}
}

// finishToolCall is the tool_call_update of a result (its output, diffs of
// file edits), and a plan update for a todo list.
func finishToolCall(call providers.ToolCall, r toolset.Result) []acpsdk.SessionUpdate {
	status := acpsdk.ToolCallStatusCompleted
	if r.IsError() {
		status = acpsdk.ToolCallStatusFailed
	}
	var content []acpsdk.ToolCallContent
	var out []acpsdk.SessionUpdate
	for _, d := range r.Display {
		switch d.Kind {
		case "diff":
			if c, ok := diffContent(d.Data); ok {
				content = append(content, c)
			}
			content = append(content, diffNote(d.Data)...)
		case "todo":
			if p, ok := plan(d.Data); ok {
				out = append(out, p)
			}
		}
	}
	text := r.OutputText()
	if r.Message != "" && (r.IsError() || text == "") {
		text = strings.TrimSpace(r.Message + "\n" + text)
	}
	if text != "" {
		content = append(content, acpsdk.ToolContent(acpsdk.TextBlock(text)))
	}
	opts := []acpsdk.ToolCallUpdateOpt{acpsdk.WithUpdateStatus(status)}
	if len(content) > 0 {
		opts = append(opts, acpsdk.WithUpdateContent(content))
	}
	return append([]acpsdk.SessionUpdate{acpsdk.UpdateToolCall(acpsdk.ToolCallId(call.ID), opts...)}, out...)
}

func diffContent(data json.RawMessage) (acpsdk.ToolCallContent, bool) {
	var d struct {
		Path    string `json:"path"`
		OldText string `json:"old_text"`
		NewText string `json:"new_text"`
	}
	if json.Unmarshal(data, &d) != nil || d.Path == "" {
		return acpsdk.ToolCallContent{}, false
	}
	if d.OldText == "" {
		return acpsdk.ToolDiffContent(d.Path, d.NewText), true
	}
	return acpsdk.ToolDiffContent(d.Path, d.NewText, d.OldText), true
}

// diffNote is the text content of a diff block's note, which says what a
// large edit's hunks leave out.
func diffNote(data json.RawMessage) []acpsdk.ToolCallContent {
	var d struct {
		Note string `json:"note"`
	}
	if json.Unmarshal(data, &d) != nil || d.Note == "" {
		return nil
	}
	return []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(d.Note))}
}

// plan is the ACP plan of a SetTodoList display block.
func plan(data json.RawMessage) (acpsdk.SessionUpdate, bool) {
	var block struct {
		Items []struct {
			Title  string `json:"title"`
			Status string `json:"status"`
		} `json:"items"`
	}
	if json.Unmarshal(data, &block) != nil {
		return acpsdk.SessionUpdate{}, false
	}
	entries := make([]acpsdk.PlanEntry, 0, len(block.Items))
	for _, it := range block.Items {
		st := acpsdk.PlanEntryStatusPending
		switch it.Status {
		case "in_progress":
			st = acpsdk.PlanEntryStatusInProgress
		case "done", "completed":
			st = acpsdk.PlanEntryStatusCompleted
		}
		entries = append(entries, acpsdk.PlanEntry{Content: it.Title, Priority: acpsdk.PlanEntryPriorityMedium, Status: st})
	}
	return acpsdk.UpdatePlan(entries...), true
}

// displayContent shows an approval request's display blocks (a diff, a
// command) in the permission request.
func displayContent(ds []approval.Display) []acpsdk.ToolCallContent {
	var out []acpsdk.ToolCallContent
	for _, d := range ds {
		switch d.Kind {
		case "diff":
			if c, ok := diffContent(d.Data); ok {
				out = append(out, c)
			}
			out = append(out, diffNote(d.Data)...)
		case "shell":
			var s struct {
				Command string `json:"command"`
			}
			if json.Unmarshal(d.Data, &s) == nil && s.Command != "" {
				out = append(out, acpsdk.ToolContent(acpsdk.TextBlock("$ "+s.Command)))
			}
		}
	}
	return out
}
