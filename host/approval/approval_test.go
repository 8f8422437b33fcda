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
