package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func TestPlanModeTools(t *testing.T) {
	var asked []approval.Request
	var answer approval.Decision
	var askErr error
	decider := approval.DeciderFunc(func(_ context.Context, req approval.Request) (approval.Decision, error) {
		asked = append(asked, req)
		return answer, askErr
	})
	ts := toolset.New(nil)
	var conv *Conversation
	for _, tool := range PlanTools(func() *Conversation { return conv }, decider) {
		if err := ts.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var changes []bool
	events := &Relay{}
	events.Set(loop.ObserverFunc(func(e loop.Event) {
		if p, ok := e.(loop.PlanModeChanged); ok {
			mu.Lock()
			changes = append(changes, p.On)
			mu.Unlock()
		}
	}))
	conv = New(Parts{Toolset: ts, Events: events})
	call := func(name, args string) toolset.Result {
		return ts.Handle(context.Background(), providers.ToolCall{ID: "c", Name: name, Arguments: args}).Result()
	}
	plan := `{"plan":"1. read\n2. write","options":[{"label":"Small","description":"one file"},{"label":"Big"}]}`

	if r := call(ExitPlanModeTool, plan); r.Kind != toolset.Failed || !strings.Contains(r.Message, "not on") {
		t.Fatalf("ExitPlanMode outside plan mode: %+v", r)
	}
	if r := call(EnterPlanModeTool, `{}`); r.IsError() || !conv.PlanMode() {
		t.Fatalf("EnterPlanMode: %+v, plan mode %v", r, conv.PlanMode())
	}
	if r := call(EnterPlanModeTool, `{}`); r.IsError() || !strings.Contains(r.Message, "already") {
		t.Fatalf("EnterPlanMode again: %+v", r)
	}
	tests := []struct {
		name, args string
		answer     approval.Decision
		err        error
		wantKind   toolset.Kind
		wantText   string
		wantPlan   bool
	}{
		{"empty plan", `{"plan":"  "}`, approval.Decision{}, nil, toolset.Failed, "plan is empty", true},
		{"duplicate label", `{"plan":"p","options":[{"label":"A"},{"label":"A"}]}`, approval.Decision{}, nil, toolset.Failed, "options[1]", true},
		{"asker fails", plan, approval.Decision{}, errors.New("gone"), toolset.Failed, "not approved: gone", true},
		{"rejected", plan, approval.Decision{Feedback: "smaller"}, nil, toolset.Rejected, "The user says: smaller", true},
		{"approved", plan, approval.Decision{Approved: true}, nil, toolset.Ok, "approved the plan", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer, askErr = tt.answer, tt.err
			r := call(ExitPlanModeTool, tt.args)
			text := r.Message + r.OutputText()
			if r.Kind != tt.wantKind || !strings.Contains(text, tt.wantText) || conv.PlanMode() != tt.wantPlan {
				t.Fatalf("result %+v, plan mode %v; want kind %v with %q, plan mode %v", r, conv.PlanMode(), tt.wantKind, tt.wantText, tt.wantPlan)
			}
		})
	}
	last := asked[len(asked)-1]
	var shown struct{ Text string }
	if len(last.Display) != 1 || json.Unmarshal(last.Display[0].Data, &shown) != nil || last.Description != shown.Text {
		t.Fatalf("the plan's description %q, display %+v", last.Description, last.Display)
	}
	if shown.Text != "1. read\n2. write\n\nApproaches:\n1. Small: one file\n2. Big" {
		t.Fatalf("the plan shown for approval: %+v", last.Display)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(changes) != 2 || !changes[0] || changes[1] {
		t.Fatalf("PlanModeChanged events %v, want [true false]", changes)
	}
}

func TestOpenPlanMode(t *testing.T) {
	for _, tt := range []struct {
		mode      approval.Mode
		plan      bool
		wantTools bool
	}{
		{approval.ModeAsk, false, true},
		{approval.ModeYolo, false, true},
		{approval.ModeUnattended, false, false}, // no one approves a plan
		{approval.ModeUnattended, true, true},
		{approval.ModeAsk, true, true},
	} {
		cfg := setup(t, nil)
		cfg.Approval, cfg.PlanMode = tt.mode, tt.plan
		conv, err := Open(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, enter := conv.Toolset().Find(EnterPlanModeTool)
		_, exit := conv.Toolset().Find(ExitPlanModeTool)
		if enter != tt.wantTools || exit != tt.wantTools || conv.PlanMode() != tt.plan {
			t.Errorf("mode %v plan %v: tools %v %v, plan mode %v", tt.mode, tt.plan, enter, exit, conv.PlanMode())
		}
		conv.Close()
	}
}
