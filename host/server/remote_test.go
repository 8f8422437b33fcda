package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// TestRemoteEvents: a remote turn's messages become the stream-json
// events of its steps, numbered from the turn's start, from where the log
// left off; its end is turn_end (after an error event when it failed).
func TestRemoteEvents(t *testing.T) {
	text := func(role providers.Role, s string) providers.Message {
		return providers.Message{Role: role, Content: []providers.ContentPart{providers.TextPart(s)}}
	}
	call := providers.Message{Role: providers.RoleAssistant, ToolCalls: []providers.ToolCall{{ID: "c1", Name: "Shell", Arguments: "{}"}}}
	result := providers.Message{Role: providers.RoleTool, ToolCallID: "c1", IsError: true, Content: []providers.ContentPart{providers.TextPart("boom")}}
	history := []providers.Message{text(providers.RoleUser, "old"), text(providers.RoleAssistant, "old answer"),
		text(providers.RoleUser, "go"), call, result, text(providers.RoleAssistant, "done")}
	tests := []struct {
		name string
		from int
		want []string
	}{
		{"the whole turn", 2, []string{
			`{"type":"step_start","step":1,"attempt":1}`,
			`{"type":"tool_call","step":1,"id":"c1","name":"Shell","arguments":"{}","duplicate":false}`,
			`{"type":"tool_result","step":1,"id":"c1","name":"Shell","status":"error","is_error":true,"brief":"","message":"","output":"boom","duration_ms":0,"repeat":0,"cancelled":false}`,
			`{"type":"step_start","step":2,"attempt":1}`,
			`{"type":"text","step":2,"text":"done"}`,
		}},
		{"after the first step", 5, []string{
			`{"type":"step_start","step":2,"attempt":1}`,
			`{"type":"text","step":2,"text":"done"}`,
		}},
		{"nothing new", 6, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, ev := range remoteEvents(history, 2, tt.from) {
				b, _ := json.Marshal(ev)
				got = append(got, string(b))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	ends := []struct {
		name  string
		out   *RemoteOutcome
		err   error
		types string
		end   string
	}{
		{"done", &RemoteOutcome{Steps: 2, Reason: loop.StopDone}, nil, "turn_end", `"reason":"done"`},
		{"failed", &RemoteOutcome{Steps: 1, Reason: loop.StopError, Error: "no worker"}, nil, "error turn_end", `"error":"no worker"`},
		{"unreachable", nil, errors.New("unreachable"), "error turn_end", `"error":"unreachable"`},
	}
	for _, tt := range ends {
		t.Run(tt.name, func(t *testing.T) {
			evs := remoteEnd(tt.out, tt.err)
			var types []string
			for _, ev := range evs {
				b, _ := json.Marshal(ev)
				var m map[string]any
				_ = json.Unmarshal(b, &m)
				types = append(types, m["type"].(string))
			}
			b, _ := json.Marshal(evs[len(evs)-1])
			if strings.Join(types, " ") != tt.types || !strings.Contains(string(b), tt.end) {
				t.Errorf("end events %v, last %s", types, b)
			}
		})
	}
}
