package repl

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// TestFaultEvents: the stream-json and text forms of the events a fault
// produces: a retry keeping calls, a truncated response, an interruption,
// a repeat reminder and the repeat stop.
func TestFaultEvents(t *testing.T) {
	shell := providers.ToolCall{ID: "c1", Name: "Shell", Arguments: `{"command":"ls"}`}
	cut := providers.ToolCall{ID: "c2", Name: "WriteFile", Arguments: `{"path":`, Truncated: true}
	boom := &providers.Error{Provider: "openai", Kind: providers.ErrConnection, Err: errors.New("stream broke")}
	tests := []struct {
		name string
		ev   loop.Event
		json string // the stream-json line
		text string // in the text output ("" for none)
	}{
		{"retry keeping a call", loop.StepRetried{Step: 1, Attempt: 2, MaxAttempts: 3, Err: boom, Kept: []providers.ToolCall{shell}},
			`{"type":"retry","step":1,"attempt":2,"max_attempts":3,"delay_ms":0,"error":"openai: connection error: stream broke","kept_calls":[{"id":"c1","name":"Shell"}]}`,
			"keeping the tool call that ran: Shell"},
		{"retry keeping none", loop.StepRetried{Step: 1, Attempt: 2, MaxAttempts: 3, Err: boom},
			`{"type":"retry","step":1,"attempt":2,"max_attempts":3,"delay_ms":0,"error":"openai: connection error: stream broke","kept_calls":[]}`,
			"(attempt 2 of 3)\n"},
		{"truncated call", loop.ResponseStopped{Step: 2, Reason: providers.StopMaxTokens, Truncated: []providers.ToolCall{cut}},
			`{"type":"stop","step":2,"stop_reason":"max_tokens","truncated_calls":[{"id":"c2","name":"WriteFile"}]}`,
			"cut off by the output token limit (max_tokens): tool call not run (WriteFile)"},
		{"truncated text", loop.ResponseStopped{Step: 2, Reason: providers.StopMaxTokens},
			`{"type":"stop","step":2,"stop_reason":"max_tokens"}`,
			"cut off by the output token limit (max_tokens): the answer is incomplete"},
		{"normal stop", loop.ResponseStopped{Step: 2, Reason: providers.StopEnd},
			`{"type":"stop","step":2,"stop_reason":"end_turn"}`, ""},
		{"truncated call started", loop.ToolCallStarted{Step: 2, Call: cut},
			`{"type":"tool_call","step":2,"id":"c2","name":"WriteFile","arguments":"{\"path\":","duplicate":false,"truncated":true}`, "WriteFile"},
		{"interrupted", loop.StepInterrupted{Step: 3, Calls: []providers.ToolCall{shell}, Text: "so far"},
			`{"type":"interrupted","step":3,"calls":[{"id":"c1","name":"Shell"}]}`, ""},
		{"reminder", loop.ToolCallFinished{Step: 5, Call: shell, Repeat: 5, Reminder: "<system>Warning</system>",
			Result: toolset.Result{Output: []providers.ContentPart{providers.TextPart("a")}}},
			`{"type":"tool_result","step":5,"id":"c1","name":"Shell","status":"ok","is_error":false,"brief":"","message":"","output":"a","duration_ms":0,"repeat":5,"cancelled":false,"reminder":"<system>Warning</system>"}`,
			"the same call 5 times in a row"},
		{"repeat stop", loop.TurnEnded{Steps: 12, Reason: loop.StopToolCallRepeat, ModelStop: providers.StopToolUse},
			`{"type":"turn_end","steps":12,"reason":"tool_call_repeat","usage":{"input_tokens":0,"output_tokens":0},"stop_reason":"tool_use"}`,
			"Stopped: the model kept making the same tool call."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var js bytes.Buffer
			NewJSONPrinter(&js).Observe(tt.ev)
			if got := strings.TrimSpace(js.String()); got != tt.json {
				t.Errorf("stream-json\n got %s\nwant %s", got, tt.json)
			}
			if !json.Valid(js.Bytes()) {
				t.Errorf("not JSON: %s", js.String())
			}
			var out, errOut bytes.Buffer
			NewTextPrinter(&out, &errOut, TextOptions{}).Observe(tt.ev)
			got := out.String() + errOut.String()
			if tt.text == "" && got != "" {
				t.Errorf("text output %q, want none", got)
			}
			if tt.text != "" && !strings.Contains(got, tt.text) {
				t.Errorf("text output %q lacks %q", got, tt.text)
			}
		})
	}
}
