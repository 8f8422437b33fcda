package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// doneEngine is an engine whose one turn has already run: it answers
// res, err and history.
type doneEngine struct {
	res     loop.TurnResult
	err     error
	history []providers.Message
}

func (e *doneEngine) ID() string { return "s1" }
func (e *doneEngine) Turn(context.Context, string) (loop.TurnResult, error) {
	return e.res, e.err
}
func (e *doneEngine) History() []providers.Message { return e.history }
func (e *doneEngine) Close()                       {}

// TestEngineStreamJSON: a turn on an engine without deltas writes the
// stream-json events of its final messages, then turn_end and result.
func TestEngineStreamJSON(t *testing.T) {
	text := func(s string) []providers.ContentPart { return []providers.ContentPart{providers.TextPart(s)} }
	history := []providers.Message{
		{Role: providers.RoleUser, Content: text("list it")},
		{Role: providers.RoleAssistant, Content: text("looking"), ToolCalls: []providers.ToolCall{{ID: "c1", Name: "Shell", Arguments: `{"command":"ls"}`}}},
		{Role: providers.RoleTool, ToolCallID: "c1", Content: text("a.txt"), IsError: true},
		{Role: providers.RoleAssistant, Content: text("one file")},
	}
	tests := []struct {
		name  string
		res   loop.TurnResult
		err   error
		code  int
		lines []string
	}{{
		name: "answered",
		res:  loop.TurnResult{Steps: 2, Reason: loop.StopDone},
		lines: []string{
			`{"type":"session","session_id":"s1","state_dir":"","agent":"","provider":"","model":"","tools":[]}`,
			`{"type":"step_start","step":1,"attempt":1}`,
			`{"type":"text","step":1,"text":"looking"}`,
			`{"type":"tool_call","step":1,"id":"c1","name":"Shell","arguments":"{\"command\":\"ls\"}","duplicate":false}`,
			`{"type":"tool_result","step":1,"id":"c1","name":"Shell","status":"error","is_error":true,"brief":"","message":"","output":"a.txt","duration_ms":0,"repeat":0,"cancelled":false}`,
			`{"type":"step_start","step":2,"attempt":1}`,
			`{"type":"text","step":2,"text":"one file"}`,
			`{"type":"turn_end","steps":2,"reason":"done","usage":{"input_tokens":0,"output_tokens":0}}`,
			`{"type":"result","subtype":"success","text":"one file","stop_reason":"done","usage":{"input_tokens":0,"output_tokens":0},"session_id":"s1","steps":2,"refused":0,"exit_code":0,"num_turns":2}`,
		},
	}, {
		name: "failed",
		res:  loop.TurnResult{Steps: 2, Reason: loop.StopError},
		err:  errors.New("401 bad key"),
		code: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := engineOneShot(context.Background(), &doneEngine{res: tt.res, err: tt.err, history: history}, "list it", &out, &errOut, true)
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			for _, l := range lines {
				if !json.Valid([]byte(l)) {
					t.Fatalf("not a JSON line: %s", l)
				}
			}
			if tt.lines != nil && strings.Join(lines, "\n") != strings.Join(tt.lines, "\n") {
				t.Errorf("events:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(tt.lines, "\n"))
			}
			var last struct {
				Type     string `json:"type"`
				Subtype  string `json:"subtype"`
				ExitCode int    `json:"exit_code"`
				Error    string `json:"error"`
			}
			_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
			wantSubtype := "success"
			if tt.err != nil {
				wantSubtype = "error_during_execution"
			}
			if last.Type != "result" || last.ExitCode != tt.code || last.Subtype != wantSubtype || (tt.err != nil && last.Error != tt.err.Error()) {
				t.Errorf("result event %+v, want exit code %d", last, tt.code)
			}
			if (err == nil) != (tt.code == 0) {
				t.Errorf("engineOneShot: %v, want exit %d", err, tt.code)
			}
		})
	}
}
