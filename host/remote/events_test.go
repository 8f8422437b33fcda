package remote

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// TestToLoopRoundTrip: every loop event with a stream-json form comes
// back from its JSON as an event of the same stream-json form, so a front
// end attached to a server shows what it would show of a run of its own.
func TestToLoopRoundTrip(t *testing.T) {
	call := providers.ToolCall{ID: "c1", Name: "Shell", Arguments: `{"command":"ls"}`}
	events := []loop.Event{
		loop.StepStarted{Step: 1, Attempt: 2},
		loop.TextDelta{Step: 1, Text: "hello *there*"},
		loop.ReasoningDelta{Step: 1, Text: "thinking"},
		loop.ToolCallStarted{Step: 1, Call: call, Duplicate: true},
		loop.ToolCallFinished{Step: 1, Call: providers.ToolCall{ID: "c1", Name: "Shell"}, Result: toolset.Result{ToolCallID: "c1",
			Kind: toolset.Failed, Output: []providers.ContentPart{providers.TextPart("out\n")}, Message: "m", Brief: "b", Feedback: "f"},
			Duration: 1500 * time.Millisecond, Repeat: 2, Cancelled: true, Reminder: "r"},
		loop.ToolCallFinished{Step: 2, Call: providers.ToolCall{ID: "c2", Name: "ReadFile"}, Result: toolset.Result{ToolCallID: "c2", Kind: toolset.Rejected}},
		loop.Compacted{Tokens: 10, Summarised: 3, Kept: 2, Err: errors.New("e")},
		loop.ToolProgress{ToolCallID: "c1", ToolName: "Shell", Progress: 1, Total: 4, Message: "m"},
		loop.ApprovalDecided{ToolCallID: "c1", Plugin: "p", ToolName: "Shell", Action: "run", Description: "ls", Approved: true,
			Answer: "user", ForSession: true, Waited: 2 * time.Second},
		loop.UsageReported{Step: 1, Usage: providers.Usage{InputTokens: 5, OutputTokens: 7}},
		loop.StepRetried{Step: 1, Attempt: 2, MaxAttempts: 3, Delay: time.Second, Err: errors.New("429"), Kept: []providers.ToolCall{{ID: "c1", Name: "Shell"}}},
		loop.ResponseStopped{Step: 1, Reason: providers.StopMaxTokens, Truncated: []providers.ToolCall{{ID: "c3", Name: "WriteFile"}}},
		loop.StepInterrupted{Step: 1, Calls: []providers.ToolCall{{ID: "c1", Name: "Shell"}}},
		loop.TurnFailed{Err: errors.New("boom")},
		loop.TurnEnded{Steps: 2, Reason: loop.StopDone, ModelStop: providers.StopEnd, Usage: providers.Usage{InputTokens: 1}, Err: errors.New("x")},
		loop.HookRan{Event: "PreToolUse", Target: "Shell", Command: "c", Action: "block", Reason: "r", ExitCode: 2, Duration: time.Second, Warning: "w"},
		loop.PermissionDecided{ToolCallID: "c1", ToolName: "Shell", Decision: "deny", Rule: "Shell(rm *)", Where: "f:1", Reason: "r"},
		loop.AgentReloaded{Started: []string{"a"}, Stopped: []string{}, Kept: []string{"b"}, Tools: []string{"T"}},
	}
	for _, e := range events {
		want := streamjson.FromLoop(e)
		data, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var typ struct{ Type string }
		_ = json.Unmarshal(data, &typ)
		back, ok := ToLoop(typ.Type, data)
		if !ok {
			t.Errorf("%s: no loop event", typ.Type)
			continue
		}
		if got := streamjson.FromLoop(back); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", typ.Type, got, want)
		}
	}
}

// TestToLoopRefuses: an event of another type, or one that does not
// decode, has no loop form.
func TestToLoopRefuses(t *testing.T) {
	for _, c := range []struct{ typ, data string }{
		{"session", `{"type":"session"}`},
		{"turn_start", `{"type":"turn_start","text":"hi"}`},
		{"text", `{"type":"text","text":5}`},
		{"tool_result", `[]`},
	} {
		if e, ok := ToLoop(c.typ, json.RawMessage(c.data)); ok {
			t.Errorf("%s %s: got %#v", c.typ, c.data, e)
		}
	}
}
