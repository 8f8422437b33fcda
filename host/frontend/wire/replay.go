package wire

import (
	"strings"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// replay sends the session's history as the events a client would have
// seen: CompactionEnd with the summary a compacted history starts with,
// TurnBegin for each of the user's turns, SteerInput for a message
// steered into one, ContentPart for the assistant's text and reasoning,
// ToolCall and ToolResult for its calls, TurnEnd closing each turn. It
// answers {status: "finished", events, requests} (requests is always 0:
// approvals are not part of the history).
func (s *server) replay() (any, *rpcError) {
	if s.conv.Running() {
		return nil, &rpcError{Code: codeBusy, Message: "An agent turn is already in progress"}
	}
	events := 0
	emit := func(typ string, payload map[string]any) {
		payload["replay"] = true
		s.emit(typ, payload)
		events++
	}
	open := false
	for _, m := range s.conv.History() {
		switch m.Role {
		case providers.RoleUser:
			text := m.Text()
			if rest, ok := strings.CutPrefix(text, loop.SteeredNote); ok && open {
				emit("SteerInput", map[string]any{"user_input": rest})
				continue
			}
			if summary, ok := strings.CutPrefix(text, loop.SummaryPrefix); ok {
				// A compacted history starts with the summary.
				emit("CompactionEnd", map[string]any{"summary": summary})
				continue
			}
			if open {
				emit("TurnEnd", map[string]any{})
			}
			emit("TurnBegin", map[string]any{"user_input": userParts(m)})
			open = true
		case providers.RoleAssistant:
			if m.Reasoning != "" {
				emit("ContentPart", map[string]any{"type": "think", "think": m.Reasoning})
			}
			if t := m.Text(); t != "" {
				emit("ContentPart", map[string]any{"type": "text", "text": t})
			}
			for _, c := range m.ToolCalls {
				emit("ToolCall", map[string]any{"type": "function", "id": c.ID,
					"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
			}
		case providers.RoleTool:
			emit("ToolResult", map[string]any{"tool_call_id": m.ToolCallID, "return_value": map[string]any{
				"is_error": m.IsError, "output": m.Text(), "message": "", "display": []any{}}})
		}
	}
	if open {
		emit("TurnEnd", map[string]any{})
	}
	return map[string]any{"status": "finished", "events": events, "requests": 0}, nil
}

// userParts is a user message's input: its text, or content parts when it
// has an image.
func userParts(m providers.Message) any {
	images := false
	for _, p := range m.Content {
		images = images || p.Type == providers.PartImage
	}
	if !images {
		return m.Text()
	}
	parts := make([]map[string]any, 0, len(m.Content))
	for _, p := range m.Content {
		if p.Type == providers.PartImage {
			parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{"url": p.ImageURL}})
		} else {
			parts = append(parts, map[string]any{"type": "text", "text": p.Text})
		}
	}
	return parts
}
