package wire

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// emit sends an `event` notification.
func (s *server) emit(typ string, payload any) {
	s.peer.notify("event", map[string]any{"type": typ, "payload": payload})
}

// event sends a loop event as Kimi's wire event of the same meaning;
// events Kimi has no name for keep their Go name (e.g. ToolProgress).
func (s *server) event(e loop.Event) {
	typ, payload := wireEvent(e)
	s.emit(typ, payload)
}

func wireEvent(e loop.Event) (string, any) {
	switch e := e.(type) {
	case loop.StepStarted:
		return "StepBegin", map[string]any{"n": e.Step, "attempt": e.Attempt}
	case loop.TextDelta:
		return "ContentPart", map[string]any{"type": "text", "text": e.Text}
	case loop.ReasoningDelta:
		return "ContentPart", map[string]any{"type": "think", "think": e.Text}
	case loop.ToolCallStarted:
		return "ToolCall", map[string]any{"type": "function", "id": e.Call.ID,
			"function": map[string]any{"name": e.Call.Name, "arguments": e.Call.Arguments}, "duplicate": e.Duplicate}
	case loop.ToolCallFinished:
		return "ToolResult", map[string]any{"tool_call_id": e.Call.ID, "return_value": returnValue(e.Result),
			"duration_ms": e.Duration.Milliseconds(), "cancelled": e.Cancelled}
	case loop.UsageReported:
		return "StatusUpdate", map[string]any{"token_usage": map[string]any{
			"input_other": e.Usage.InputTokens, "output": e.Usage.OutputTokens,
			"input_cache_read": e.Usage.CacheReadTokens, "input_cache_creation": e.Usage.CacheCreationTokens}}
	case loop.StepRetried:
		return "StepRetry", map[string]any{"n": e.Step, "next_attempt": e.Attempt, "max_attempts": e.MaxAttempts,
			"wait_s": e.Delay.Seconds(), "error_type": fmt.Sprintf("%T", e.Err), "error": errText(e.Err)}
	case loop.ApprovalDecided:
		resp := "reject"
		switch {
		case e.Approved && e.ForSession:
			resp = "approve_for_session"
		case e.Approved:
			resp = "approve"
		}
		return "ApprovalResponse", map[string]any{"tool_call_id": e.ToolCallID, "sender": e.ToolName, "action": e.Action,
			"response": resp, "feedback": e.Feedback, "answered_by": e.Answer}
	case loop.Compacted:
		return "CompactionEnd", map[string]any{"tokens": e.Tokens, "summarised": e.Summarised, "kept": e.Kept, "error": errText(e.Err)}
	case loop.TurnFailed:
		return "TurnFailed", map[string]any{"error": errText(e.Err)}
	case loop.AgentReloaded:
		return "AgentReloaded", map[string]any{"started": e.Started, "stopped": e.Stopped, "kept": e.Kept,
			"tools": e.Tools, "error": errText(e.Err)}
	case loop.PlanModeChanged:
		return "StatusUpdate", map[string]any{"plan_mode": e.On}
	case loop.TurnEnded:
		return "TurnEnd", map[string]any{"steps": e.Steps, "reason": string(e.Reason), "error": errText(e.Err)}
	}
	t := reflect.TypeOf(e)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name(), e
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// returnValue is a tool result as Kimi's ToolReturnValue.
func returnValue(r toolset.Result) map[string]any {
	display := make([]json.RawMessage, 0, len(r.Display)+1)
	if r.Brief != "" {
		display = append(display, displayBlock("brief", mustJSON(map[string]string{"text": r.Brief})))
	}
	for _, d := range r.Display {
		display = append(display, displayBlock(d.Kind, d.Data))
	}
	return map[string]any{"is_error": r.IsError(), "output": r.OutputText(), "message": r.Message, "display": display}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// displayBlock is a display block as Kimi's DisplayBlock: {"type": KIND,
// ...fields of data} when data is an object, else {"type", "data"}.
func displayBlock(kind string, data json.RawMessage) json.RawMessage {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil || fields == nil {
		return mustJSON(map[string]any{"type": kind, "data": data})
	}
	fields["type"] = mustJSON(kind)
	return mustJSON(fields)
}
