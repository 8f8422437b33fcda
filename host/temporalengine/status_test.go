package temporalengine

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// TestWorkflowStatus: the status query says whether a turn runs, how many
// started, the history's length, the approvals it waits for, and the
// last turn's outcome once it ended.
func TestWorkflowStatus(t *testing.T) {
	call := providers.ToolCall{ID: "call_a", Name: "Shell", Arguments: `{"command":"make"}`}
	req := &approval.Request{ToolCallID: "call_a", Plugin: "shell", ToolName: "Shell", Action: "run command", Description: "make"}
	f := &fakeWorker{calls: map[string]int{}, answers: []func() (ModelOutput, error){answer("", call), answer("built")}}
	tool := func(ctx context.Context, in ToolInput) (ToolOutput, error) {
		if len(in.Decided) > 0 {
			return ok("built")(0)
		}
		return ToolOutput{Asks: req}, nil
	}
	env := sessionTestEnv(f.model, tool, f.close)
	status := func() Status {
		v, err := env.QueryWorkflow(QueryStatus)
		if err != nil {
			t.Fatal(err)
		}
		var st Status
		if err := v.Get(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	var before, waiting, after Status
	env.RegisterDelayedCallback(func() {
		before = status()
		env.UpdateWorkflow(UpdateTurn, "turn", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("turn rejected: %v", err) }, OnAccept: func() {},
			OnComplete: func(any, error) {
				after = status()
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalClose, nil) }, time.Second)
			},
		}, "build it")
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		waiting = status()
		env.UpdateWorkflow(UpdateApprove, "answer", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("answer rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, Answer{ToolCallID: "call_a", Answer: approval.Approve})
	}, time.Minute)
	env.ExecuteWorkflow(WorkflowName, SessionInput{WorkDir: "/w"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("%+v", err)
	}
	if before.Busy || before.Turns != 0 || before.HistoryLen != 0 || before.Last != nil {
		t.Errorf("before the turn: %+v", before)
	}
	if !waiting.Busy || waiting.Turns != 1 || waiting.HistoryLen != 1 || len(waiting.Pending) != 1 ||
		waiting.Pending[0].Request.ToolCallID != "call_a" || waiting.Last != nil {
		t.Errorf("waiting for the approval: %+v", waiting)
	}
	if after.Busy || after.Turns != 1 || after.HistoryLen != 4 || len(after.Pending) != 0 ||
		after.Last == nil || after.Last.Reason != loop.StopDone || after.Last.Steps != 2 {
		t.Errorf("after the turn: %+v (last %+v)", after, after.Last)
	}
}
