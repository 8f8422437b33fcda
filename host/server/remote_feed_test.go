package server

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
)

// TestFeedFallback: what a turn's feed did not show comes from the
// history: the steps after the last one the feed started, and that
// step's tool results the feed did not log.
func TestFeedFallback(t *testing.T) {
	text := func(role providers.Role, s string) providers.Message {
		return providers.Message{Role: role, Content: []providers.ContentPart{providers.TextPart(s)}}
	}
	calls := providers.Message{Role: providers.RoleAssistant, ToolCalls: []providers.ToolCall{{ID: "c1", Name: "Shell", Arguments: "{}"},
		{ID: "c2", Name: "Shell", Arguments: "{}"}}}
	result := func(id, out string) providers.Message {
		return providers.Message{Role: providers.RoleTool, ToolCallID: id, Content: []providers.ContentPart{providers.TextPart(out)}}
	}
	history := []providers.Message{text(providers.RoleUser, "go"), calls, result("c1", "one"), result("c2", "two"),
		text(providers.RoleAssistant, "done")}
	tests := []struct {
		name     string
		feedStep int
		logged   map[string]bool
		want     []string
	}{
		{"no feed", 0, nil, []string{"step_start 1", "tool_call 1 c1", "tool_call 1 c2", "tool_result 1 c1", "tool_result 1 c2",
			"step_start 2", "text 2"}},
		{"the first step started", 1, nil, []string{"tool_result 1 c1", "tool_result 1 c2", "step_start 2", "text 2"}},
		{"one result logged", 1, map[string]bool{"c1": true}, []string{"tool_result 1 c2", "step_start 2", "text 2"}},
		{"the last step started", 2, map[string]bool{"c1": true, "c2": true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, ev := range feedFallback(history, 0, tt.feedStep, tt.logged) {
				b, _ := json.Marshal(ev)
				var m struct {
					Type string
					Step int
					ID   string
				}
				_ = json.Unmarshal(b, &m)
				got = append(got, strings.TrimSpace(m.Type+" "+strconv.Itoa(m.Step)+" "+m.ID))
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("events %q, want %q", got, tt.want)
			}
		})
	}
}
