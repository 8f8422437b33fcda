package google_test

import (
	"testing"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/googletest"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
)

func TestStopReasons(t *testing.T) {
	tests := []struct {
		finish string
		calls  bool
		want   providers.StopReason
	}{
		{"STOP", false, providers.StopEnd},
		{"STOP", true, providers.StopToolUse},
		{"MAX_TOKENS", false, providers.StopMaxTokens},
		{"SAFETY", false, providers.StopContentFilter},
		{"RECITATION", false, providers.StopContentFilter},
		{"MALFORMED_FUNCTION_CALL", false, providers.StopOther},
	}
	for _, tt := range tests {
		name := tt.finish
		if tt.calls {
			name += " with calls"
		}
		t.Run(name, func(t *testing.T) {
			resp := googletest.Response{Text: []string{"Hello"}, FinishReason: tt.finish, Usage: &googletest.Usage{PromptTokens: 1, CandidatesTokens: 1}}
			if tt.calls {
				resp.Calls = []googletest.Call{{Name: "Shell", Args: `{"command":"ls"}`}}
			}
			srv := googletest.NewServer(t, resp)
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

func TestTruncatedCallInHistory(t *testing.T) {
	srv := googletest.NewServer(t, googletest.Response{Text: []string{"ok"}})
	req := userRequest("write it")
	req.History = append(req.History,
		providers.Message{Role: providers.RoleAssistant, ToolCalls: []providers.ToolCall{{ID: "WriteFile:0", Name: "WriteFile", Arguments: `{"path":"a.txt"}`, Truncated: true}}},
		providers.Message{Role: providers.RoleTool, ToolCallID: "WriteFile:0", Content: []providers.ContentPart{providers.TextPart("cut off")}})
	if r := streamtest.Drain(mustStream(t, newProvider(t, srv, nil), req), nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	fc := srv.LastRequest(t).Generate.Contents[1].Parts[0].FunctionCall
	// Empty args are left out, as for a call without arguments.
	if fc == nil || fc.Name != "WriteFile" || (len(fc.Args) != 0 && string(fc.Args) != "{}") {
		t.Fatalf("function call sent %+v (args %s), want empty args", fc, fc.Args)
	}
}
