package capability

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

type calls map[string]bool

func (c calls) Active(id string) bool { return c[id] }

func TestApproval(t *testing.T) {
	var got approval.Request
	decider := approval.DeciderFunc(func(_ context.Context, r approval.Request) (approval.Decision, error) {
		got = r
		return approval.Decision{Feedback: "not today"}, nil
	})
	tests := []struct {
		name    string
		host    *Host
		id      string
		code    codes.Code
		approve bool
	}{
		{"asked for a running call", &Host{Plugin: "shell", Decider: decider, Calls: calls{"c1": true}}, "c1", codes.OK, false},
		{"no call in progress", &Host{Plugin: "shell", Decider: decider, Calls: calls{}}, "c2", codes.FailedPrecondition, false},
		{"no call id", &Host{Plugin: "shell", Decider: decider}, "", codes.FailedPrecondition, false},
		{"no decider", &Host{Plugin: "shell", Calls: calls{"c1": true}}, "c1", codes.Unimplemented, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := tt.host.RequestApproval(context.Background(), pluginrpc.ApprovalRequest{
				ToolCallID: tt.id, ToolName: "Shell", Action: "run command", Description: "Run `ls`",
				Display: []pluginrpc.DisplayBlock{{Kind: "shell", Data: json.RawMessage(`{"command":"ls"}`)}},
			})
			if status.Code(err) != tt.code {
				t.Fatalf("code %v (%v), want %v", status.Code(err), err, tt.code)
			}
			if err == nil && (resp.Approved != tt.approve || resp.Feedback != "not today") {
				t.Fatalf("response %v", resp)
			}
		})
	}
	if got.Action != "run command" || got.ToolCallID != "c1" || len(got.Display) != 1 || string(got.Display[0].Data) != `{"command":"ls"}` {
		t.Fatalf("decider saw %+v", got)
	}
}

func TestSnapshots(t *testing.T) {
	h := &Host{
		Env:     Environment{OS: "linux", ShellName: "bash", ShellPath: "/bin/bash", WorkDir: "/w"},
		Session: Session{ID: "s1", WorkDir: "/w", StateDir: "/state/plugins/x"},
		Configs: map[string]json.RawMessage{"Search": json.RawMessage(`{"endpoint":"http://x"}`), "Bad": json.RawMessage(`{`)},
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
		{"Other", "", codes.OK},
		{"Bad", "", codes.Internal},
	}
	for _, tt := range tests {
		raw, err := h.GetConfig(context.Background(), tt.tool)
		if status.Code(err) != tt.code || string(raw) != tt.want {
			t.Errorf("config %s: %s %v", tt.tool, raw, err)
		}
	}
}
