package openaicompat_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

func TestStopReasons(t *testing.T) {
	tests := []struct {
		finish string
		calls  bool
		want   providers.StopReason
	}{
		{"stop", false, providers.StopEnd},
		{"tool_calls", true, providers.StopToolUse},
		{"length", false, providers.StopMaxTokens},
		{"content_filter", false, providers.StopContentFilter},
		{"insufficient_system_resource", false, providers.StopOther},
	}
	for _, tt := range tests {
		t.Run(tt.finish, func(t *testing.T) {
			resp := openaitest.Response{Text: []string{"Hello"}, FinishReason: tt.finish, Usage: &openaitest.Usage{PromptTokens: 1, CompletionTokens: 1}}
			if tt.calls {
				resp.ToolCalls = []openaitest.ToolCall{{Name: "Shell", Arguments: `{"command":"ls"}`}}
			}
			r := run(t, newProvider(t, openaitest.NewServer(t, resp)), userHello)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.Stop != tt.want || r.Stops != 1 || !r.StopLast {
				t.Fatalf("stop %q (%d events, last %v), want one %q, last", r.Stop, r.Stops, r.StopLast, tt.want)
			}
			for _, c := range r.Calls {
				if c.Truncated {
					t.Errorf("call %+v truncated", c)
				}
			}
		})
	}
}

// TestLengthInToolCallArguments: finish_reason length in the middle of a
// call's arguments emits the call as received, marked Truncated, after the
// complete calls and before the stop reason.
func TestLengthInToolCallArguments(t *testing.T) {
	for _, quirks := range []openaitest.Quirks{{SplitArguments: 5}, {SplitArguments: 3, FinishEveryChunk: true}} {
		srv := openaitest.NewServer(t, openaitest.Response{
			ToolCalls: []openaitest.ToolCall{
				{Name: "Shell", Arguments: `{"command":"ls"}`},
				{Name: "WriteFile", Arguments: `{"path":"a.txt","content":"hel`},
			},
			FinishReason: "length", Quirks: quirks,
		})
		r := run(t, newProvider(t, srv), userHello)
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		if len(r.Calls) != 2 || r.Calls[0].Truncated || r.Calls[0].Arguments != `{"command":"ls"}` {
			t.Fatalf("calls %+v, want Shell complete first", r.Calls)
		}
		cut := r.Calls[1]
		if !cut.Truncated || cut.Name != "WriteFile" || cut.Arguments != `{"path":"a.txt","content":"hel` {
			t.Errorf("cut call %+v, want WriteFile truncated with the arguments received", cut)
		}
		if r.Stop != providers.StopMaxTokens || !r.StopLast {
			t.Errorf("stop %q last %v, want max_tokens last", r.Stop, r.StopLast)
		}
	}
}

// TestTruncatedCallInHistory: a truncated call goes back with "{}" as its
// arguments, which every server parses.
func TestTruncatedCallInHistory(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"ok"}})
	req := providers.Request{History: []providers.Message{
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("write it")}},
		{Role: providers.RoleAssistant, ToolCalls: []providers.ToolCall{{ID: "call_1", Name: "WriteFile", Arguments: `{"path":"a.txt","con`, Truncated: true}}},
		{Role: providers.RoleTool, ToolCallID: "call_1", Content: []providers.ContentPart{providers.TextPart("cut off")}},
	}}
	if r := run(t, newProvider(t, srv), req); r.Err != nil {
		t.Fatal(r.Err)
	}
	args := srv.LastRequest(t).Chat.Messages[1].ToolCalls[0].Function.Arguments
	if args != "{}" || !json.Valid([]byte(args)) {
		t.Fatalf("arguments sent %q, want {}", args)
	}
}

// TestLengthWithNothing: a response cut off before any text or call is an
// empty response that says the output limit cut it.
func TestLengthWithNothing(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Reasoning: []string{"Let me think"}, FinishReason: "length"})
	r := run(t, newProvider(t, srv), userHello)
	var pe *providers.Error
	if !errors.As(r.Err, &pe) || pe.Kind != providers.ErrEmptyResponse || !strings.Contains(r.Err.Error(), "output limit") {
		t.Fatalf("error %v, want an empty response naming the output limit", r.Err)
	}
}
