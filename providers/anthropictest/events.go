package anthropictest

import (
	"encoding/json"
	"fmt"
)

// Block is one content block of a scripted response.
type Block struct {
	// Type is text, thinking, redacted_thinking or tool_use.
	Type string
	// Deltas are streamed one content_block_delta each: text_delta for
	// text, thinking_delta for thinking, input_json_delta for tool_use.
	Deltas []string
	// Signature is a thinking block's signature, sent as a signature_delta
	// after the thinking deltas.
	Signature string
	// Data is a redacted_thinking block's data.
	Data string
	// ID and Name are a tool_use block's.
	ID   string
	Name string
}

// Text is a text block streamed in the given pieces.
func Text(parts ...string) Block { return Block{Type: "text", Deltas: parts} }

// Thinking is a thinking block streamed in the given pieces, then signed.
func Thinking(signature string, parts ...string) Block {
	return Block{Type: "thinking", Deltas: parts, Signature: signature}
}

// Redacted is a redacted_thinking block.
func Redacted(data string) Block { return Block{Type: "redacted_thinking", Data: data} }

// ToolUse is a tool_use block whose input JSON is streamed in pieces of at
// most split bytes (all at once when split <= 0).
func ToolUse(id, name, input string, split int) Block {
	return Block{Type: "tool_use", ID: id, Name: name, Deltas: splitString(input, split)}
}

func splitString(s string, n int) []string {
	if n <= 0 || len(s) <= n {
		return []string{s}
	}
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// Event is one server-sent event.
type Event struct {
	Type string
	Data string
}

func event(typ string, m map[string]any) Event {
	m["type"] = typ
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // plain values only
	}
	return Event{Type: typ, Data: string(b)}
}

func usageJSON(u *Usage) map[string]any {
	return map[string]any{
		"input_tokens":                u.InputTokens,
		"output_tokens":               u.OutputTokens,
		"cache_read_input_tokens":     u.CacheReadInputTokens,
		"cache_creation_input_tokens": u.CacheCreationInputTokens,
	}
}

// Events returns every event the server streams for resp, in order (pings,
// breaks and stream errors not included; with a stream error, the events
// up to the last content_block_stop). Tests can use it to find the
// number of an event, e.g. for Response.AfterEvent.
func Events(model string, resp Response) []Event {
	if resp.RawEvents != nil {
		return resp.RawEvents
	}
	u := resp.Usage
	if u == nil {
		u = &Usage{}
	}
	start := usageJSON(u)
	start["output_tokens"] = 1
	evs := []Event{event("message_start", map[string]any{"message": map[string]any{
		"id": "msg_anthropictest", "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": start,
	}})}
	stopReason := resp.StopReason
	for i, b := range resp.Blocks {
		var cb map[string]any
		switch b.Type {
		case "text":
			cb = map[string]any{"type": "text", "text": ""}
		case "thinking":
			cb = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
		case "redacted_thinking":
			cb = map[string]any{"type": "redacted_thinking", "data": b.Data}
		case "tool_use":
			cb = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
			if stopReason == "" {
				stopReason = "tool_use"
			}
		default:
			panic(fmt.Sprintf("anthropictest: unknown block type %q", b.Type))
		}
		evs = append(evs, event("content_block_start", map[string]any{"index": i, "content_block": cb}))
		for _, d := range b.Deltas {
			var delta map[string]any
			switch b.Type {
			case "text":
				delta = map[string]any{"type": "text_delta", "text": d}
			case "thinking":
				delta = map[string]any{"type": "thinking_delta", "thinking": d}
			case "tool_use":
				delta = map[string]any{"type": "input_json_delta", "partial_json": d}
			default:
				continue
			}
			evs = append(evs, event("content_block_delta", map[string]any{"index": i, "delta": delta}))
		}
		if b.Type == "thinking" && b.Signature != "" {
			evs = append(evs, event("content_block_delta", map[string]any{"index": i,
				"delta": map[string]any{"type": "signature_delta", "signature": b.Signature}}))
		}
		evs = append(evs, event("content_block_stop", map[string]any{"index": i}))
	}
	if stopReason == "" {
		stopReason = "end_turn"
	}
	if resp.StreamErrorType != "" {
		return evs // the error event ends the stream instead
	}
	evs = append(evs, event("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.OutputTokens},
	}))
	if !resp.OmitStop {
		evs = append(evs, event("message_stop", map[string]any{}))
	}
	return evs
}
