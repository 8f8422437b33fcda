package capability

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// calls are one plugin's calls in progress: id -> tool.
type calls map[string]string

func (c calls) ToolOf(id string) (string, bool) { tool, ok := c[id]; return tool, ok }

// declares: every tool of the plugin declared every capability.
var declares = map[string][]string{
	"Sneaky": {pluginrpc.CapApproval, pluginrpc.CapProgress, pluginrpc.CapUserInput},
	"Search": {pluginrpc.CapEnvironment, pluginrpc.CapSession, pluginrpc.CapConfig, pluginrpc.CapModel},
	"Bad":    {pluginrpc.CapConfig},
}

// TestApproval: a request must cite a call in progress of this plugin whose
// tool declared Approval; the decider sees the host's plugin and tool, not
// the tool the plugin claims.
func TestApproval(t *testing.T) {
	var got approval.Request
	decider := approval.DeciderFunc(func(_ context.Context, r approval.Request) (approval.Decision, error) {
		got = r
		return approval.Decision{Feedback: "not today"}, nil
	})
	mine := calls{"c1": "Sneaky"}
	tests := []struct {
		name    string
		host    *Host
		id      string
		code    codes.Code
		message string
	}{
		{"asked for a running call", &Host{Plugin: "hostile", Decider: decider, Calls: mine, Declared: declares}, "c1", codes.OK, ""},
		{"another plugin's call in progress", &Host{Plugin: "hostile", Decider: decider, Calls: mine, Declared: declares}, "shell-call",
			codes.FailedPrecondition, `approval requested by plugin hostile with no tool call of its own in progress (tool call id "shell-call")`},
		{"no call tracker", &Host{Plugin: "hostile", Decider: decider, Declared: declares}, "c1", codes.FailedPrecondition, "no tool call of its own"},
		{"no call id", &Host{Plugin: "hostile", Decider: decider, Calls: mine, Declared: declares}, "", codes.FailedPrecondition, "no tool call of its own"},
		{"no decider", &Host{Plugin: "hostile", Calls: mine, Declared: declares}, "c1", codes.Unimplemented, ""},
		{"the call's tool did not declare Approval", &Host{Plugin: "hostile", Decider: decider, Calls: mine,
			Declared: map[string][]string{"Sneaky": {pluginrpc.CapProgress}, "Other": {pluginrpc.CapApproval}}}, "c1",
			codes.FailedPrecondition, "tool Sneaky of plugin hostile did not declare the Approval capability"},
		{"nothing declared", &Host{Plugin: "hostile", Decider: decider, Calls: mine}, "c1",
			codes.FailedPrecondition, "tool Sneaky of plugin hostile did not declare the Approval capability"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = approval.Request{}
			resp, err := tt.host.RequestApproval(context.Background(), pluginrpc.ApprovalRequest{
				ToolCallID: tt.id, ToolName: "Shell", Action: "run command", Description: "Run `ls`",
				Display: []pluginrpc.DisplayBlock{{Kind: "shell", Data: json.RawMessage(`{"command":"ls"}`)}},
			})
			if status.Code(err) != tt.code || (tt.message != "" && !strings.Contains(status.Convert(err).Message(), tt.message)) {
				t.Fatalf("code %v (%v), want %v %q", status.Code(err), err, tt.code, tt.message)
			}
			if err != nil {
				if got.ToolCallID != "" {
					t.Fatalf("the decider was asked: %+v", got)
				}
				return
			}
			if resp.Approved || resp.Feedback != "not today" {
				t.Fatalf("response %v", resp)
			}
			// The claimed tool name "Shell" is ignored: the host names the
			// plugin and the tool of the call.
			want := approval.Request{ToolCallID: "c1", Plugin: "hostile", ToolName: "Sneaky", Action: "run command", Description: "Run `ls`"}
			if got.ToolCallID != want.ToolCallID || got.Plugin != want.Plugin || got.ToolName != want.ToolName ||
				got.Action != want.Action || got.Description != want.Description ||
				len(got.Display) != 1 || string(got.Display[0].Data) != `{"command":"ls"}` {
				t.Fatalf("decider saw %+v, want %+v", got, want)
			}
		})
	}
}

// TestUndeclaredCapabilities: a capability no tool of the plugin declared
// is refused, naming the plugin and the capability.
func TestUndeclaredCapabilities(t *testing.T) {
	h := &Host{Plugin: "hostile", Calls: calls{"c1": "Sneaky"}, Progress: &ProgressSinks{}, Model: &Model{Name: "m"},
		Questions: approval.UserInputFunc(func(context.Context, approval.QuestionRequest) (approval.Answers, error) {
			return approval.Answers{}, nil
		}),
		Declared: map[string][]string{"Sneaky": {pluginrpc.CapApproval}}}
	ctx := context.Background()
	tests := []struct {
		name, want string
		call       func() error
	}{
		{"Environment", "plugin hostile did not declare the Environment capability", func() error { _, err := h.GetEnvironment(ctx); return err }},
		{"Session", "plugin hostile did not declare the Session capability", func() error { _, err := h.GetSession(ctx); return err }},
		{"Model", "plugin hostile did not declare the Model capability", func() error { _, err := h.GetModel(ctx); return err }},
		{"Config", "tool Sneaky of plugin hostile did not declare the Config capability", func() error { _, err := h.GetConfig(ctx, "Sneaky"); return err }},
		{"Progress", "tool Sneaky of plugin hostile did not declare the Progress capability", func() error {
			return h.ReportProgress(ctx, pluginrpc.ProgressReport{ToolCallID: "c1", Progress: 1})
		}},
		{"UserInput", "tool Sneaky of plugin hostile did not declare the UserInput capability", func() error {
			_, err := h.AskUser(ctx, pluginrpc.QuestionRequest{ToolCallID: "c1"})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != tt.want {
				t.Fatalf("err = %v, want FailedPrecondition %q", err, tt.want)
			}
		})
	}
}

func TestSnapshots(t *testing.T) {
	h := &Host{
		Env:      Environment{OS: "linux", ShellName: "bash", ShellPath: "/bin/bash", WorkDir: "/w"},
		Session:  Session{ID: "s1", WorkDir: "/w", StateDir: "/state/plugins/x"},
		Configs:  map[string]json.RawMessage{"Search": json.RawMessage(`{"endpoint":"http://x"}`), "Bad": json.RawMessage(`{`)},
		Declared: declares,
	}
	env, _ := h.GetEnvironment(context.Background())
	if env.ShellPath != "/bin/bash" || env.WorkDir != "/w" || env.Now.IsZero() {
		t.Fatalf("environment %+v", env)
	}
	sess, _ := h.GetSession(context.Background())
	if sess.ID != "s1" || sess.StateDir != "/state/plugins/x" {
		t.Fatalf("session %+v", sess)
	}
	tests := []struct {
		tool, want string
		code       codes.Code
	}{
		{"Search", `{"endpoint":"http://x"}`, codes.OK},
		{"Other", "", codes.FailedPrecondition},
		{"Bad", "", codes.Internal},
	}
	for _, tt := range tests {
		raw, err := h.GetConfig(context.Background(), tt.tool)
		if status.Code(err) != tt.code || string(raw) != tt.want {
			t.Errorf("config %s: %s %v", tt.tool, raw, err)
		}
	}
}
