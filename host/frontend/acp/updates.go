package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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
	case loop.ToolCallStarted:
		u.send(ctx, startToolCall(e.Call, acpsdk.ToolCallStatusInProgress))
	case loop.ToolCallFinished:
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
	case loop.StepRetried:
		u.send(ctx, acpsdk.UpdateAgentThoughtText(fmt.Sprintf("\n(the model request failed: %v; retrying in %s)\n", e.Err, e.Delay.Round(1e6))))
	}
}

// replay sends a saved history as updates: the user's messages, the
// agent's text and reasoning, each tool call with its result.
func (u *updates) replay(ctx context.Context, history []providers.Message) {
	calls := map[string]providers.ToolCall{}
	for _, m := range history {
		switch m.Role {
		case providers.RoleUser:
			if t := m.Text(); t != "" {
				u.send(ctx, acpsdk.UpdateUserMessageText(t))
			}
		case providers.RoleAssistant:
			if m.Reasoning != "" {
				u.send(ctx, acpsdk.UpdateAgentThoughtText(m.Reasoning))
			}
			if t := m.Text(); t != "" {
				u.send(ctx, acpsdk.UpdateAgentMessageText(t))
			}
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
				u.send(ctx, startToolCall(c, acpsdk.ToolCallStatusInProgress))
			}
		case providers.RoleTool:
			status := acpsdk.ToolCallStatusCompleted
			if m.IsError {
				status = acpsdk.ToolCallStatusFailed
			}
			u.send(ctx, acpsdk.UpdateToolCall(acpsdk.ToolCallId(m.ToolCallID), acpsdk.WithUpdateStatus(status),
				acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(m.Text()))})))
		}
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

func startToolCall(call providers.ToolCall, status acpsdk.ToolCallStatus) acpsdk.SessionUpdate {
	var args map[string]any
	_ = json.Unmarshal([]byte(call.Arguments), &args)
	opts := []acpsdk.ToolCallStartOpt{acpsdk.WithStartKind(toolKind(call.Name)), acpsdk.WithStartStatus(status)}
	if args != nil {
		opts = append(opts, acpsdk.WithStartRawInput(args))
		if p, ok := args["path"].(string); ok && strings.HasPrefix(p, "/") {
			opts = append(opts, acpsdk.WithStartLocations([]acpsdk.ToolCallLocation{{Path: p}}))
		}
	}
	return acpsdk.StartToolCall(acpsdk.ToolCallId(call.ID), title(call, args), opts...)
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
