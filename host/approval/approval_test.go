package approval

import (
	"context"
	"errors"
	"testing"
)

func TestSessionRemembersActions(t *testing.T) {
	var asked []string
	answers := []Answer{ApproveForSession, Reject, Approve}
	s := NewSession(func(_ context.Context, req Request) (Answer, string, error) {
		asked = append(asked, req.Action)
		a := answers[0]
		answers = answers[1:]
		return a, "use a smaller file", nil
	})
	steps := []struct {
		action   string
		approved bool
		feedback string
	}{
		{"run command", true, ""},                  // asked, approved for the session
		{"run command", true, ""},                  // not asked again
		{"edit file", false, "use a smaller file"}, // asked, rejected with feedback
		{"edit file", true, ""},                    // asked again, approved once
	}
	for i, st := range steps {
		d, err := s.Decide(context.Background(), Request{Action: st.action})
		if err != nil || d.Approved != st.approved || d.Feedback != st.feedback {
			t.Fatalf("step %d: %+v, %v", i, d, err)
		}
	}
	if len(asked) != 3 {
		t.Fatalf("asked %v, want 3 prompts", asked)
	}
}

func TestSessionAskError(t *testing.T) {
	want := errors.New("terminal closed")
	s := NewSession(func(context.Context, Request) (Answer, string, error) { return Reject, "", want })
	if _, err := s.Decide(context.Background(), Request{Action: "x"}); !errors.Is(err, want) {
		t.Fatalf("err = %v", err)
	}
}

func TestFixedDeciders(t *testing.T) {
	if d, _ := (Yolo{}).Decide(context.Background(), Request{}); !d.Approved {
		t.Fatal("yolo rejected")
	}
	if d, _ := (Deny{Feedback: UnattendedFeedback}).Decide(context.Background(), Request{}); d.Approved || d.Feedback != UnattendedFeedback {
		t.Fatalf("deny = %+v", d)
	}
}

// TestSessionKeyedByPluginToolAction: approving one plugin's tool's action
// for the session approves exactly that (plugin, tool, action): a hostile
// tool's "run command" never approves the real Shell's.
func TestSessionKeyedByPluginToolAction(t *testing.T) {
	hostile := Request{Plugin: "hostile", ToolName: "Sneaky", Action: "run command"}
	tests := []struct {
		name  string
		later Request
		asked bool
	}{
		{"the same plugin, tool and action", hostile, false},
		{"another plugin's tool of the same name", Request{Plugin: "shell", ToolName: "Sneaky", Action: "run command"}, true},
		{"another tool of the same plugin", Request{Plugin: "hostile", ToolName: "Shell", Action: "run command"}, true},
		{"the real Shell", Request{Plugin: "shell", ToolName: "Shell", Action: "run command"}, true},
		{"another action", Request{Plugin: "hostile", ToolName: "Sneaky", Action: "edit file"}, true},
		{"names that run together", Request{Plugin: "hostile\x00Sneaky", Action: "run command"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked := 0
			s := NewSession(func(context.Context, Request) (Answer, string, error) {
				asked++
				if asked == 1 {
					return ApproveForSession, "", nil
				}
				return Reject, "no", nil
			})
			if d, err := s.Decide(context.Background(), hostile); err != nil || !d.Approved {
				t.Fatalf("first request: %+v, %v", d, err)
			}
			d, err := s.Decide(context.Background(), tt.later)
			if err != nil {
				t.Fatal(err)
			}
			if got := asked == 2; got != tt.asked {
				t.Fatalf("later request asked = %v, want %v (decision %+v)", got, tt.asked, d)
			}
			if d.Approved == tt.asked {
				t.Fatalf("later request approved = %v", d.Approved)
			}
		})
	}
}
