package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/anthropictest"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
)

func TestStopReasons(t *testing.T) {
	tests := []struct {
		reason string
		want   providers.StopReason
	}{
		{"end_turn", providers.StopEnd},
		{"stop_sequence", providers.StopEnd},
		{"tool_use", providers.StopToolUse},
		{"max_tokens", providers.StopMaxTokens},
		{"model_context_window_exceeded", providers.StopMaxTokens},
		{"refusal", providers.StopContentFilter},
		{"pause_turn", providers.StopOther},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("Hello")},
				StopReason: tt.reason, Usage: &anthropictest.Usage{InputTokens: 1, OutputTokens: 1}})
			r := streamtest.Drain(mustStream(t, newProvider(t, srv, nil), userRequest("hi")), nil)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.Stop != tt.want || r.Stops != 1 || !r.StopLast {
				t.Fatalf("stop %q (%d events, last %v), want one %q, last", r.Stop, r.Stops, r.StopLast, tt.want)
			}
		})
	}
}

// TestMaxTokensInInputJSON: stop_reason max_tokens in the middle of a
// tool_use block's input_json_delta emits that call marked Truncated, with
// the input received, after the complete call before it and before the
// stop reason; it is not dispatched as a complete call.
func TestMaxTokensInInputJSON(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{
		Blocks: []anthropictest.Block{
			anthropictest.Text("Writing."),
			anthropictest.ToolUse("toolu_1", "Shell", `{"command":"ls"}`, 4),
			anthropictest.ToolUse("toolu_2", "WriteFile", `{"path":"a.txt","content":"hel`, 6),
		},
		StopReason: "max_tokens",
	})
	var seen []providers.ToolCall
	r := streamtest.Drain(mustStream(t, newProvider(t, srv, nil), userRequest("hi")), func(c providers.ToolCall) { seen = append(seen, c) })
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if len(seen) != 2 || seen[0].ID != "toolu_1" || seen[0].Truncated {
		t.Fatalf("calls %+v, want toolu_1 complete first", seen)
	}
	if c := seen[1]; c.ID != "toolu_2" || !c.Truncated || c.Arguments != `{"path":"a.txt","content":"hel` {
		t.Errorf("cut call %+v, want toolu_2 truncated with the input received", c)
	}
	if r.Stop != providers.StopMaxTokens || !r.StopLast {
		t.Errorf("stop %q last %v, want max_tokens last", r.Stop, r.StopLast)
	}
}

// TestUnparsedInputWithoutMaxTokens: input that does not parse, in a
// response that ended for another reason, is emitted as it is (the tool
// reports the error), not as truncated.
func TestUnparsedInputWithoutMaxTokens(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{
		anthropictest.ToolUse("toolu_1", "Shell", `{"command":`, 0),
		anthropictest.Text("and more"),
	}})
	r := streamtest.Drain(mustStream(t, newProvider(t, srv, nil), userRequest("hi")), nil)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if len(r.Calls) != 1 || r.Calls[0].Truncated || r.Calls[0].Arguments != `{"command":` {
		t.Fatalf("calls %+v", r.Calls)
	}
	// The held call comes before the text that followed its block.
	if r.Events[0].Kind != providers.EventToolCall {
		t.Errorf("first event %+v, want the call", r.Events[0])
	}
}

// TestMaxTokensInOpenBlock: a stream that ends with max_tokens while a
// tool_use block is still open (no content_block_stop) truncates it.
func TestMaxTokensInOpenBlock(t *testing.T) {
	ev := func(typ, data string) anthropictest.Event { return anthropictest.Event{Type: typ, Data: data} }
	srv := anthropictest.NewServer(t, anthropictest.Response{RawEvents: []anthropictest.Event{
		ev("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"usage":{"input_tokens":3,"output_tokens":1}}}`),
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Shell","input":{}}}`),
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}`),
		ev("message_stop", `{"type":"message_stop"}`),
	}})
	r := streamtest.Drain(mustStream(t, newProvider(t, srv, nil), userRequest("hi")), nil)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if len(r.Calls) != 1 || !r.Calls[0].Truncated || r.Stop != providers.StopMaxTokens {
		t.Fatalf("calls %+v stop %q", r.Calls, r.Stop)
	}
}

func TestTruncatedCallInHistory(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("ok")}})
	req := userRequest("write it")
	req.History = append(req.History,
		providers.Message{Role: providers.RoleAssistant, ToolCalls: []providers.ToolCall{{ID: "toolu_1", Name: "WriteFile", Arguments: `{"path":"a.txt"}`, Truncated: true}}},
		providers.Message{Role: providers.RoleTool, ToolCallID: "toolu_1", Content: []providers.ContentPart{providers.TextPart("cut off")}})
	s, err := newProvider(t, srv, nil).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if r := streamtest.Drain(s, nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	use := srv.LastRequest(t).Messages.Messages[1].Content[0]
	var input map[string]any
	if use.Type != "tool_use" || json.Unmarshal(use.Input, &input) != nil || len(input) != 0 {
		t.Fatalf("tool_use sent %+v (input %s), want input {}", use, use.Input)
	}
}

// TestMaxTokensWithOnlyThinking: a response the output limit cut off while
// thinking is an empty response that says so.
func TestMaxTokensWithOnlyThinking(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Thinking("sig", "Let me think")}, StopReason: "max_tokens"})
	r := streamtest.Drain(mustStream(t, newProvider(t, srv, nil), userRequest("hi")), nil)
	var pe *providers.Error
	if !errors.As(r.Err, &pe) || pe.Kind != providers.ErrEmptyResponse || !strings.Contains(r.Err.Error(), "output limit cut it off (stop_reason max_tokens)") {
		t.Fatalf("error %v, want an empty response naming the output limit", r.Err)
	}
}
