package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// emit sends an `event` notification.
func (s *server) emit(typ string, payload any) {
	s.peer.notify("event", map[string]any{"type": typ, "payload": payload})
}

// event sends a loop event as Kimi's wire event of the same meaning;
// events Kimi has no name for keep the loop's name (e.g. ToolProgress).
// Every payload is written out here, field by field: snake_case keys,
// durations in milliseconds (keys ending in _ms).
func (s *server) event(e loop.Event) {
	if d, ok := e.(loop.ApprovalDecided); ok {
		// The approval request's id, known to ask, goes with its answer.
		s.mu.Lock()
		id := s.approvals[d.ToolCallID]
		delete(s.approvals, d.ToolCallID)
		s.mu.Unlock()
		typ, payload := wireEvent(e)
		payload["request_id"] = id
		s.emit(typ, payload)
		return
	}
	if st, ok := e.(loop.Steered); ok {
		// Kimi sends one SteerInput a steered message.
		for _, t := range st.Texts {
			s.emit("SteerInput", map[string]any{"user_input": t, "n": st.Step})
		}
		return
	}
	typ, payload := wireEvent(e)
	if typ == "" {
		s.cfg.Logger.Warn("wire: a loop event without a wire shape was not sent", "event", fmt.Sprintf("%T", e))
		return
	}
	s.emit(typ, payload)
}

// wireEvent is e's wire type and payload; "" for an event the wire does
// not know (TestEveryEventHasAWireShape keeps that from happening).
func wireEvent(e loop.Event) (string, map[string]any) {
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
	case loop.ToolCallPart:
		return "ToolCallPart", map[string]any{"n": e.Step, "tool_call_id": e.ToolCallID, "name": e.ToolName,
			"arguments_part": e.ArgumentsPart}
	case loop.ToolCallFinished:
		return "ToolResult", map[string]any{"tool_call_id": e.Call.ID, "return_value": returnValue(e.Result),
			"duration_ms": e.Duration.Milliseconds(), "cancelled": e.Cancelled, "repeat": e.Repeat, "reminder": e.Reminder}
	case loop.UsageReported:
		p := map[string]any{"token_usage": tokenUsage(e.Usage), "context_tokens": e.ContextTokens,
			"max_context_tokens": e.MaxContextTokens, "context_usage": nil}
		if e.MaxContextTokens > 0 {
			p["context_usage"] = float64(e.ContextTokens) / float64(e.MaxContextTokens)
		}
		if e.Priced {
			p["cost_usd"] = e.CostUSD
		}
		return "StatusUpdate", p
	case loop.LimitReached:
		return "LimitReached", map[string]any{"reason": string(e.Reason), "message": e.Text, "turns": e.Spent.Turns,
			"token_usage": tokenUsage(e.Spent.Usage), "cost_usd": e.Spent.CostUSD}
	case loop.StepRetried:
		p := map[string]any{"n": e.Step, "next_attempt": e.Attempt, "max_attempts": e.MaxAttempts,
			"wait_s": e.Delay.Seconds(), "wait_ms": e.Delay.Milliseconds(), "error_type": errorType(e.Err),
			"error": errText(e.Err), "kept": callIDs(e.Kept)}
		var pe *providers.Error
		if errors.As(e.Err, &pe) && pe.StatusCode != 0 {
			p["status_code"] = pe.StatusCode
		}
		return "StepRetry", p
	case loop.StepInterrupted:
		return "StepInterrupted", map[string]any{"n": e.Step, "text": e.Text, "calls": calls(e.Calls)}
	case loop.ResponseStopped:
		return "ResponseStopped", map[string]any{"n": e.Step, "reason": string(e.Reason), "truncated": calls(e.Truncated)}
	case loop.ApprovalDecided:
		resp := "reject"
		switch {
		case e.Approved && e.ForSession:
			resp = "approve_for_session"
		case e.Approved:
			resp = "approve"
		}
		return "ApprovalResponse", map[string]any{"request_id": "", "tool_call_id": e.ToolCallID, "sender": e.ToolName,
			"plugin": e.Plugin, "action": e.Action, "description": e.Description, "response": resp,
			"feedback": e.Feedback, "answered_by": e.Answer, "waited_ms": e.Waited.Milliseconds()}
	case loop.ToolProgress:
		return "ToolProgress", map[string]any{"tool_call_id": e.ToolCallID, "tool_name": e.ToolName,
			"progress": e.Progress, "total": e.Total, "message": e.Message}
	case loop.HookRan:
		return "HookRan", map[string]any{"event": e.Event, "target": e.Target, "command": e.Command,
			"action": e.Action, "reason": e.Reason, "exit_code": e.ExitCode,
			"duration_ms": e.Duration.Milliseconds(), "warning": e.Warning}
	case loop.PermissionDecided:
		return "PermissionDecided", map[string]any{"tool_call_id": e.ToolCallID, "tool_name": e.ToolName,
			"decision": e.Decision, "rule": e.Rule, "where": e.Where, "reason": e.Reason}
	case loop.CompactionStarted:
		return "CompactionBegin", map[string]any{"tokens": e.Tokens}
	case loop.Compacted:
		return "CompactionEnd", map[string]any{"tokens": e.Tokens, "summarised": e.Summarised, "kept": e.Kept, "error": errText(e.Err)}
	case loop.Steered:
		return "SteerInput", map[string]any{"user_input": strings.Join(e.Texts, "\n"), "n": e.Step}
	case loop.SubagentEvent:
		typ, payload := wireEvent(e.Event)
		if typ == "" {
			return "", nil
		}
		return "SubagentEvent", map[string]any{"parent_tool_call_id": e.ParentToolCallID, "agent_id": e.AgentID,
			"subagent_type": e.SubagentType, "event": map[string]any{"type": typ, "payload": payload}}
	case loop.TurnFailed:
		return "TurnFailed", map[string]any{"error": errText(e.Err), "error_type": errorType(e.Err)}
	case loop.AgentReloaded:
		return "AgentReloaded", map[string]any{"started": nonNil(e.Started), "stopped": nonNil(e.Stopped),
			"kept": nonNil(e.Kept), "tools": nonNil(e.Tools), "error": errText(e.Err)}
	case loop.PlanModeChanged:
		return "StatusUpdate", map[string]any{"plan_mode": e.On}
	case loop.TurnEnded:
		p := map[string]any{"steps": e.Steps, "reason": string(e.Reason),
			"model_stop": string(e.ModelStop), "token_usage": tokenUsage(e.Usage), "error": errText(e.Err)}
		if e.Priced {
			p["cost_usd"] = e.CostUSD
		}
		return "TurnEnd", p
	}
	return "", nil
}

func tokenUsage(u providers.Usage) map[string]any {
	return map[string]any{"input_other": u.InputTokens, "output": u.OutputTokens,
		"input_cache_read": u.CacheReadTokens, "input_cache_creation": u.CacheCreationTokens}
}

// calls are tool calls as {id, name, arguments}.
func calls(cs []providers.ToolCall) []map[string]any {
	out := make([]map[string]any, 0, len(cs))
	for _, c := range cs {
		out = append(out, map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments})
	}
	return out
}

func callIDs(cs []providers.ToolCall) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// errorType names an error's class as Kimi's StepRetry.error_type does
// (the names of its provider exceptions): APIStatusError for an HTTP
// status, APIConnectionError, APITimeoutError, APIEmptyResponseError;
// "" for none and Error for any other.
func errorType(err error) string {
	if err == nil {
		return ""
	}
	var pe *providers.Error
	if !errors.As(err, &pe) {
		return "Error"
	}
	switch pe.Kind {
	case providers.ErrConnection:
		return "APIConnectionError"
	case providers.ErrTimeout:
		return "APITimeoutError"
	case providers.ErrEmptyResponse:
		return "APIEmptyResponseError"
	}
	if pe.StatusCode != 0 {
		return "APIStatusError"
	}
	return "Error"
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
