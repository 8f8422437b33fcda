package approval

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestFlowAsk(t *testing.T) {
	var events []Decided
	answers := []Answer{ApproveForSession, Reject}
	asked := 0
	f := NewFlow(ModeAsk, func(context.Context, Request) (Answer, string, error) {
		ans := answers[asked]
		asked++
		return ans, "no", nil
	}, func(d Decided) { events = append(events, d) })
	clock := time.Unix(0, 0)
	f.now = func() time.Time { clock = clock.Add(2 * time.Second); return clock }
	ctx := context.Background()
	run := Request{ToolCallID: "c1", ToolName: "Shell", Action: "run command"}
	edit := Request{ToolCallID: "c2", ToolName: "WriteFile", Action: "edit file"}
	steps := []struct {
		req      Request
		approved bool
		answer   string
		waited   time.Duration
	}{
		{run, true, AnswerUser, 2 * time.Second},   // asked: approve for the session
		{run, true, AnswerSession, 0},              // remembered
		{edit, false, AnswerUser, 2 * time.Second}, // asked: reject
	}
	for i, st := range steps {
		d, err := f.Decide(ctx, st.req)
		if err != nil || d.Approved != st.approved || events[i].Answer != st.answer || events[i].Waited != st.waited {
			t.Fatalf("step %d: %+v %v, event %+v", i, d, err, events[i])
		}
	}
	if asked != 2 || !events[0].ForSession || events[2].Decision.Feedback != "no" {
		t.Fatalf("asked %d times, events %+v", asked, events)
	}
	if !f.SetYolo(true) || f.Mode() != ModeYolo || !f.Yolo() {
		t.Fatal("yolo did not switch on")
	}
	if d, _ := f.Decide(ctx, edit); !d.Approved || events[3].Answer != AnswerYolo || asked != 2 {
		t.Fatalf("yolo: %+v %+v", d, events[3])
	}
	f.SetYolo(false)
	if f.Mode() != ModeAsk || f.Yolo() {
		t.Fatal("yolo did not switch off")
	}
}

func TestFlowModes(t *testing.T) {
	tests := []struct {
		mode     Mode
		approved bool
		feedback string
		answer   string
	}{
		{ModeYolo, true, "", AnswerYolo},
		{ModeUnattended, false, UnattendedFeedback, AnswerUnattended},
		{ModeAsk, false, "", AnswerSession}, // nobody to ask
	}
	for _, tt := range tests {
		var got []Decided
		f := NewFlow(tt.mode, nil, func(d Decided) { got = append(got, d) })
		d, err := f.Decide(context.Background(), Request{ToolCallID: "c", ToolName: "Shell", Action: "run command"})
		if err != nil || d.Approved != tt.approved || d.Feedback != tt.feedback {
			t.Fatalf("mode %v: %+v %v", tt.mode, d, err)
		}
		if len(got) != 1 || got[0].Answer != tt.answer {
			t.Fatalf("mode %v: events %+v", tt.mode, got)
		}
		if tt.mode != ModeAsk && f.SetYolo(true) {
			t.Fatalf("mode %v: SetYolo switched a flow that does not ask", tt.mode)
		}
	}
	if !strings.Contains(UnattendedFeedback, "--yolo") {
		t.Fatal("the unattended feedback does not mention --yolo")
	}
}

func TestFlowAskError(t *testing.T) {
	want := errors.New("terminal closed")
	reported := false
	f := NewFlow(ModeAsk, func(context.Context, Request) (Answer, string, error) { return Reject, "", want },
		func(Decided) { reported = true })
	if _, err := f.Decide(context.Background(), Request{Action: "x"}); !errors.Is(err, want) || reported {
		t.Fatalf("err = %v, reported %v", err, reported)
	}
}

// TestFlowForbidYolo: a flow whose yolo is forbidden never approves
// without asking: SetYolo(true) refuses, and a flow made in ModeYolo asks.
func TestFlowForbidYolo(t *testing.T) {
	forbidden := errors.New("yolo is refused by the admin policy /etc/p.yaml (rule forced.yolo: forbidden)")
	req := Request{ToolCallID: "c1", ToolName: "Shell", Action: "run command"}
	for _, mode := range []Mode{ModeAsk, ModeYolo} {
		asked := 0
		f := NewFlow(mode, func(context.Context, Request) (Answer, string, error) { asked++; return Reject, "", nil }, nil)
		f.ForbidYolo(forbidden)
		if f.SetYolo(true) {
			t.Errorf("%v: SetYolo(true) switched yolo on", mode)
		}
		if f.Yolo() || f.Mode() == ModeYolo {
			t.Errorf("%v: the flow says it is in yolo", mode)
		}
		if !errors.Is(f.YoloForbidden(), forbidden) {
			t.Errorf("%v: YoloForbidden = %v", mode, f.YoloForbidden())
		}
		d, err := f.Decide(context.Background(), req)
		if err != nil || d.Approved || asked != 1 {
			t.Errorf("%v: decided %+v %v after %d questions; want the user asked and the action rejected", mode, d, err, asked)
		}
	}
	f := NewFlow(ModeAsk, nil, nil)
	if !f.SetYolo(true) || !f.Yolo() {
		t.Fatal("without ForbidYolo, SetYolo(true) does not switch yolo on")
	}
}
