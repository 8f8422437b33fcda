package remote

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// kindOf is the toolset.Kind of a tool_result's status.
var kindOf = map[string]toolset.Kind{"ok": toolset.Ok, "error": toolset.Failed, "rejected": toolset.Rejected}

// ToLoop is the loop event of a stream-json event (the inverse of
// streamjson.FromLoop), for the front ends that show loop events: the
// terminal's printer, the ACP updates. ok is false for an event with no
// loop form (session, result, the server's own events) and for one that
// does not decode.
func ToLoop(typ string, data json.RawMessage) (loop.Event, bool) {
	dec := func(v any) bool { return json.Unmarshal(data, v) == nil }
	switch typ {
	case "step_start":
		var e streamjson.StepStartEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.StepStarted{Step: e.Step, Attempt: e.Attempt}, true
	case "text", "reasoning":
		var e streamjson.TextEvent
		if !dec(&e) {
			return nil, false
		}
		if typ == "reasoning" {
			return loop.ReasoningDelta{Step: e.Step, Text: e.Text}, true
		}
		return loop.TextDelta{Step: e.Step, Text: e.Text}, true
	case "tool_call":
		var e streamjson.ToolCallEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.ToolCallStarted{Step: e.Step, Duplicate: e.Duplicate,
			Call: providers.ToolCall{ID: e.ID, Name: e.Name, Arguments: e.Arguments, Truncated: e.Truncated}}, true
	case "tool_result":
		var e streamjson.ToolResultEvent
		if !dec(&e) {
			return nil, false
		}
		kind, ok := kindOf[e.Status]
		if !ok && e.IsError {
			kind = toolset.Failed
		}
		res := toolset.Result{ToolCallID: e.ID, Kind: kind, Message: e.Message, Brief: e.Brief, Feedback: e.Feedback}
		if e.Output != "" {
			res.Output = []providers.ContentPart{providers.TextPart(e.Output)}
		}
		return loop.ToolCallFinished{Step: e.Step, Call: providers.ToolCall{ID: e.ID, Name: e.Name}, Result: res,
			Duration: time.Duration(e.DurationMS) * time.Millisecond, Repeat: e.Repeat, Cancelled: e.Cancelled, Reminder: e.Reminder}, true
	case "compaction":
		var e streamjson.CompactionEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.Compacted{Tokens: e.Tokens, Summarised: e.Summarised, Kept: e.Kept, Err: errOf(e.Error)}, true
	case "tool_progress":
		var e streamjson.ToolProgressEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.ToolProgress{ToolCallID: e.ID, ToolName: e.Name, Progress: e.Progress, Total: e.Total, Message: e.Message}, true
	case "approval":
		var e streamjson.ApprovalEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.ApprovalDecided{ToolCallID: e.ToolCallID, Plugin: e.Plugin, ToolName: e.Tool, Action: e.Action,
			Description: e.Description, Approved: e.Approved, Feedback: e.Feedback, Answer: e.Answer, ForSession: e.ForSession,
			Waited: time.Duration(e.WaitMS) * time.Millisecond}, true
	case "usage":
		var e streamjson.UsageEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.UsageReported{Step: e.Step, Usage: e.Usage}, true
	case "retry":
		var e streamjson.RetryEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.StepRetried{Step: e.Step, Attempt: e.Attempt, MaxAttempts: e.MaxAttempts,
			Delay: time.Duration(e.DelayMS) * time.Millisecond, Err: errors.New(e.Error), Kept: calls(e.KeptCalls)}, true
	case "stop":
		var e streamjson.StopEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.ResponseStopped{Step: e.Step, Reason: providers.StopReason(e.StopReason), Truncated: calls(e.TruncatedCalls)}, true
	case "interrupted":
		var e streamjson.InterruptedEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.StepInterrupted{Step: e.Step, Calls: calls(e.Calls)}, true
	case "error":
		var e streamjson.ErrorEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.TurnFailed{Err: errors.New(e.Error)}, true
	case "turn_end":
		var e streamjson.TurnEndEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.TurnEnded{Steps: e.Steps, Usage: e.Usage, Reason: loop.StopReason(e.Reason),
			ModelStop: providers.StopReason(e.StopReason), Err: errOf(e.Error)}, true
	case "hook":
		var e streamjson.HookEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.HookRan{Event: e.Event, Target: e.Target, Command: e.Command, Action: e.Action, Reason: e.Reason,
			ExitCode: e.ExitCode, Duration: time.Duration(e.DurationMS) * time.Millisecond, Warning: e.Warning}, true
	case "permission":
		var e streamjson.PermissionEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.PermissionDecided{ToolCallID: e.ToolCallID, ToolName: e.Tool, Decision: e.Decision, Rule: e.Rule,
			Where: e.Where, Reason: e.Reason}, true
	case "reload":
		var e streamjson.ReloadEvent
		if !dec(&e) {
			return nil, false
		}
		return loop.AgentReloaded{Started: e.Started, Stopped: e.Stopped, Kept: e.Kept, Tools: e.Tools, Err: errOf(e.Error)}, true
	}
	return nil, false
}

func errOf(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

func calls(refs []streamjson.CallRef) []providers.ToolCall {
	if len(refs) == 0 {
		return nil
	}
	out := make([]providers.ToolCall, len(refs))
	for i, r := range refs {
		out[i] = providers.ToolCall{ID: r.ID, Name: r.Name}
	}
	return out
}
