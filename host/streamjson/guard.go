package streamjson

import "github.com/kosong-host/kosong-host/host/loop"

// The stream-json events of hooks, permission rules and agent reloads
// (see docs/stream-json.md).
type (
	HookEvent struct {
		Type       string `json:"type"`
		Event      string `json:"event"`
		Target     string `json:"target"`
		Command    string `json:"command"`
		Action     string `json:"action"`
		Reason     string `json:"reason,omitempty"`
		ExitCode   int    `json:"exit_code"`
		DurationMS int64  `json:"duration_ms"`
		Warning    string `json:"warning,omitempty"`
	}
	PermissionEvent struct {
		Type       string `json:"type"`
		ToolCallID string `json:"tool_call_id"`
		Tool       string `json:"tool"`
		Decision   string `json:"decision"`
		Rule       string `json:"rule"`
		Where      string `json:"where"`
		Reason     string `json:"reason"`
	}
	ReloadEvent struct {
		Type    string   `json:"type"`
		Started []string `json:"started"`
		Stopped []string `json:"stopped"`
		Kept    []string `json:"kept"`
		Tools   []string `json:"tools"`
		Error   string   `json:"error,omitempty"`
	}
)

// guardEvent is the stream-json form of the hook, permission and
// reload events (nil for other events).
func guardEvent(e loop.Event) any {
	switch e := e.(type) {
	case loop.HookRan:
		return HookEvent{Type: "hook", Event: e.Event, Target: e.Target, Command: e.Command, Action: e.Action,
			Reason: e.Reason, ExitCode: e.ExitCode, DurationMS: e.Duration.Milliseconds(), Warning: e.Warning}
	case loop.PermissionDecided:
		return PermissionEvent{Type: "permission", ToolCallID: e.ToolCallID, Tool: e.ToolName, Decision: e.Decision,
			Rule: e.Rule, Where: e.Where, Reason: e.Reason}
	case loop.AgentReloaded:
		ev := ReloadEvent{Type: "reload", Started: nonNil(e.Started), Stopped: nonNil(e.Stopped), Kept: nonNil(e.Kept), Tools: nonNil(e.Tools)}
		if e.Err != nil {
			ev.Error = e.Err.Error()
		}
		return ev
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
