package temporalengine

import (
	"context"
	"testing"

	"github.com/kosong-host/kosong-host/host/approval"
)

// TestAsker: a worker's asker answers from the workflow's decisions and
// the actions approved for the session, and records any other request
// (rejected for now) for the workflow to ask.
func TestAsker(t *testing.T) {
	req := approval.Request{ToolCallID: "c1", Plugin: "shell", ToolName: "Shell", Action: "run command"}
	other := req
	other.Action = "write file"
	tests := []struct {
		name       string
		decided    []Decided
		forSession []string
		ask        approval.Request
		want       approval.Answer
		feedback   string
		asked      bool
	}{
		{"nothing decided: recorded", nil, nil, req, approval.Reject, pendingFeedback, true},
		{"approved", []Decided{{Key: req.SessionKey(), Approved: true}}, nil, req, approval.Approve, "", false},
		{"rejected with feedback", []Decided{{Key: req.SessionKey(), Feedback: "not now"}}, nil, req, approval.Reject, "not now", false},
		{"approved for the session", nil, []string{req.SessionKey()}, req, approval.Approve, "", false},
		{"another action is asked", []Decided{{Key: req.SessionKey(), Approved: true}}, []string{req.SessionKey()}, other, approval.Reject, pendingFeedback, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAsker()
			a.begin("c1", tt.decided, tt.forSession)
			ans, fb, err := a.Ask(context.Background(), tt.ask)
			if err != nil || ans != tt.want || fb != tt.feedback {
				t.Fatalf("Ask: %v %q %v, want %v %q", ans, fb, err, tt.want, tt.feedback)
			}
			got := a.end("c1")
			if (got != nil) != tt.asked || (got != nil && got.Action != tt.ask.Action) {
				t.Fatalf("recorded %+v, want recorded=%v", got, tt.asked)
			}
			if a.end("c1") != nil {
				t.Fatal("a request is recorded twice")
			}
		})
	}
}
