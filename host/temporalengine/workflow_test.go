package temporalengine

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// fakeWorker stands for a worker's activities: the model answers in
// order, the tool answers by tools[name] (attempt counted from 1).
type fakeWorker struct {
	mu      sync.Mutex
	answers []func() (ModelOutput, error)
	tools   map[string]func(attempt int) (ToolOutput, error)
	calls   map[string]int
	models  int
	closed  int
	// planModes are the plan mode of each model request.
	planModes []bool
}

func (f *fakeWorker) model(ctx context.Context, in ModelInput) (ModelOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.models >= len(f.answers) {
		return ModelOutput{}, temporal.NewNonRetryableApplicationError("no answer left", ErrorProvider, nil)
	}
	f.models++
	f.planModes = append(f.planModes, in.PlanMode)
	return f.answers[f.models-1]()
}

func (f *fakeWorker) tool(ctx context.Context, in ToolInput) (ToolOutput, error) {
	f.mu.Lock()
	f.calls[in.Call.Name]++
	n := f.calls[in.Call.Name]
	f.mu.Unlock()
	return f.tools[in.Call.Name](n)
}

func (f *fakeWorker) close(ctx context.Context, session string) error {
	f.mu.Lock()
	f.closed++
	f.mu.Unlock()
	return nil
}

func answer(text string, calls ...providers.ToolCall) func() (ModelOutput, error) {
	return func() (ModelOutput, error) {
		msg := providers.Message{Role: providers.RoleAssistant, ToolCalls: calls}
		if text != "" {
			msg.Content = []providers.ContentPart{providers.TextPart(text)}
		}
		out := ModelOutput{Message: msg, Usage: providers.Usage{InputTokens: 10, OutputTokens: 2}}
		for _, c := range calls {
			if strings.HasPrefix(c.Name, "Read") {
				out.Repeatable = append(out.Repeatable, c.Name)
			}
		}
		return out, nil
	}
}

func ok(text string) func(int) (ToolOutput, error) {
	return func(int) (ToolOutput, error) {
		return ToolOutput{Message: providers.Message{Role: providers.RoleTool, Content: []providers.ContentPart{providers.TextPart(text)}}}, nil
	}
}

// runTurns runs the workflow with one turn per input, then closes it.
func runTurns(t *testing.T, f *fakeWorker, inputs ...string) ([]TurnOutcome, SessionResult) {
	t.Helper()
	env := sessionTestEnv(f.model, f.tool, f.close)
	var outs []TurnOutcome
	var send func(i int)
	send = func(i int) {
		if i == len(inputs) {
			env.SignalWorkflow(SignalClose, nil)
			return
		}
		env.UpdateWorkflow(UpdateTurn, "turn-"+inputs[i], &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("turn %q rejected: %v", inputs[i], err) },
			OnComplete: func(v any, err error) {
				if err != nil {
					t.Errorf("turn %q: %v", inputs[i], err)
				}
				outs = append(outs, v.(TurnOutcome))
				env.RegisterDelayedCallback(func() { send(i + 1) }, time.Second)
			},
		}, inputs[i])
	}
	env.RegisterDelayedCallback(func() { send(0) }, time.Second)
	env.ExecuteWorkflow(WorkflowName, SessionInput{WorkDir: "/w", Retry: providers.RetryPolicy{Attempts: 3, Initial: time.Second, Max: time.Second}})
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("%+v", err)
	}
	var res SessionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return outs, res
}

func texts(h []providers.Message) []string {
	var out []string
	for _, m := range h {
		out = append(out, string(m.Role)+":"+m.Text())
	}
	return out
}

func TestWorkflowTurns(t *testing.T) {
	call := providers.ToolCall{ID: "call_0", Name: "Shell", Arguments: `{"command":"true"}`}
	read := providers.ToolCall{ID: "call_1", Name: "ReadFile", Arguments: `{"path":"a"}`}
	tests := []struct {
		name    string
		f       *fakeWorker
		inputs  []string
		want    []string
		reasons []loop.StopReason
		calls   map[string]int
	}{{
		name:    "answer",
		f:       &fakeWorker{answers: []func() (ModelOutput, error){answer("hello")}},
		inputs:  []string{"hi"},
		want:    []string{"user:hi", "assistant:hello"},
		reasons: []loop.StopReason{loop.StopDone},
	}, {
		name:    "a tool call, then two turns",
		f:       &fakeWorker{answers: []func() (ModelOutput, error){answer("", call), answer("done"), answer("again")}, tools: map[string]func(int) (ToolOutput, error){"Shell": ok("ran")}},
		inputs:  []string{"run it", "more"},
		want:    []string{"user:run it", "assistant:", "tool:ran", "assistant:done", "user:more", "assistant:again"},
		reasons: []loop.StopReason{loop.StopDone, loop.StopDone},
		calls:   map[string]int{"Shell": 1},
	}, {
		name: "a side-effecting call whose worker stopped is never repeated",
		f: &fakeWorker{answers: []func() (ModelOutput, error){answer("", call), answer("noted")}, tools: map[string]func(int) (ToolOutput, error){
			"Shell": func(int) (ToolOutput, error) { return ToolOutput{}, temporal.NewHeartbeatTimeoutError() }}},
		inputs:  []string{"run it"},
		want:    []string{"user:run it", "assistant:", "tool:" + OutcomeUnknown, "user:" + MovedNote, "assistant:noted"},
		reasons: []loop.StopReason{loop.StopDone},
		calls:   map[string]int{"Shell": 1},
	}, {
		name: "a read-only call whose heartbeat timed out runs again",
		f: &fakeWorker{answers: []func() (ModelOutput, error){answer("", read), answer("read")}, tools: map[string]func(int) (ToolOutput, error){
			"ReadFile": func(n int) (ToolOutput, error) {
				if n == 1 {
					return ToolOutput{}, temporal.NewHeartbeatTimeoutError()
				}
				return ok("contents")(n)
			}}},
		inputs:  []string{"read it"},
		want:    []string{"user:read it", "assistant:", "tool:contents", "assistant:read"},
		reasons: []loop.StopReason{loop.StopDone},
		calls:   map[string]int{"ReadFile": 2},
	}, {
		name: "a retryable model failure is retried",
		f: &fakeWorker{answers: []func() (ModelOutput, error){
			func() (ModelOutput, error) {
				return ModelOutput{}, temporal.NewApplicationError("429", "RetryableProviderError")
			},
			answer("after a retry")}},
		inputs:  []string{"hi"},
		want:    []string{"user:hi", "assistant:after a retry"},
		reasons: []loop.StopReason{loop.StopDone},
	}, {
		name: "a model failure for good ends the turn with an error",
		f: &fakeWorker{answers: []func() (ModelOutput, error){
			func() (ModelOutput, error) {
				return ModelOutput{}, temporal.NewNonRetryableApplicationError("401 bad key", ErrorProvider, nil)
			}}},
		inputs:  []string{"hi"},
		want:    []string{"user:hi"},
		reasons: []loop.StopReason{loop.StopError},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.f.calls = map[string]int{}
			outs, res := runTurns(t, tt.f, tt.inputs...)
			if got := texts(res.History); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("history:\n got %q\nwant %q", got, tt.want)
			}
			if len(outs) != len(tt.reasons) {
				t.Fatalf("got %d turns, want %d", len(outs), len(tt.reasons))
			}
			for i, o := range outs {
				if o.Reason != tt.reasons[i] {
					t.Errorf("turn %d: reason %s (%s), want %s", i, o.Reason, o.Error, tt.reasons[i])
				}
			}
			for name, n := range tt.calls {
				if tt.f.calls[name] != n {
					t.Errorf("%s ran %d times, want %d", name, tt.f.calls[name], n)
				}
			}
			if tt.f.closed != 1 {
				t.Errorf("the worker's conversation was closed %d times, want 1", tt.f.closed)
			}
		})
	}
}

// quietLogger drops the SDK's log: the test's output is its own.
// sessionTestEnv is a test environment of the session workflow with its
// model, tool and close activities and worker sessions enabled.
func sessionTestEnv(model, tool, closeSession any) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quietLogger{})
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterWorkflowWithOptions(Workflow, workflowOptions())
	env.RegisterActivityWithOptions(model, activity.RegisterOptions{Name: ActivityModel})
	env.RegisterActivityWithOptions(tool, activity.RegisterOptions{Name: ActivityTool})
	env.RegisterActivityWithOptions(closeSession, activity.RegisterOptions{Name: ActivityClose})
	return env
}

type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

// TestWorkflowApprovalAnHourLater: a call that needs an approval waits
// for it in the workflow, with no activity running; answered an hour
// later (workflow time) it runs again with the answer and the turn
// resumes. "Approve for the session" answers the same action's next ask.
func TestWorkflowApprovalAnHourLater(t *testing.T) {
	shell := func(id string) providers.ToolCall {
		return providers.ToolCall{ID: id, Name: "Shell", Arguments: `{"command":"make"}`}
	}
	req := func(id string) *approval.Request {
		return &approval.Request{ToolCallID: id, Plugin: "shell", ToolName: "Shell", Action: "run command", Description: "make"}
	}
	var runs []ToolInput
	var mu sync.Mutex
	f := &fakeWorker{calls: map[string]int{}, answers: []func() (ModelOutput, error){
		answer("", shell("call_a")), answer("", shell("call_b")), answer("built")}}
	tool := func(ctx context.Context, in ToolInput) (ToolOutput, error) {
		mu.Lock()
		runs = append(runs, in)
		mu.Unlock()
		key := req(in.Call.ID).SessionKey()
		if slices.Contains(in.ForSession, key) || slices.ContainsFunc(in.Decided, func(d Decided) bool { return d.Key == key && d.Approved }) {
			return ok("built " + in.Call.ID)(0)
		}
		return ToolOutput{Asks: req(in.Call.ID)}, nil
	}

	env := sessionTestEnv(f.model, tool, f.close)
	start := env.Now()
	var answeredAt time.Time
	var out TurnOutcome
	busy := false
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateTurn, "turn", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("turn rejected: %v", err) },
			OnComplete: func(v any, err error) {
				out = v.(TurnOutcome)
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalClose, nil) }, time.Second)
			},
		}, "build it")
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryApprovals)
		if err != nil {
			t.Fatal(err)
		}
		var pending []Pending
		if err := v.Get(&pending); err != nil || len(pending) != 1 || pending[0].Request.ToolCallID != "call_a" {
			t.Fatalf("pending after an hour: %+v, %v", pending, err)
		}
		env.UpdateWorkflow(UpdateApprove, "no such call", &testsuite.TestUpdateCallback{
			OnAccept: func() { t.Error("an answer to a call that waits for none was accepted") },
			OnReject: func(error) {}, OnComplete: func(any, error) {},
		}, Answer{ToolCallID: "call_zzz", Answer: approval.Approve})
		env.UpdateWorkflow(UpdateTurn, "second turn", &testsuite.TestUpdateCallback{
			OnAccept: func() { t.Error("a second turn was accepted while one waits for an approval") },
			OnReject: func(err error) { busy = strings.Contains(err.Error(), "already in progress") }, OnComplete: func(any, error) {},
		}, "meanwhile")
		answeredAt = env.Now()
		env.UpdateWorkflow(UpdateApprove, "answer", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("answer rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, Answer{ToolCallID: "call_a", Answer: approval.ApproveForSession})
	}, time.Hour)
	env.ExecuteWorkflow(WorkflowName, SessionInput{WorkDir: "/w"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("%+v", err)
	}
	if !busy {
		t.Error("a second turn was not refused as busy while one waited for an approval")
	}
	if answeredAt.Sub(start) < time.Hour {
		t.Errorf("answered after %s of workflow time, want an hour", answeredAt.Sub(start))
	}
	if out.Reason != loop.StopDone || out.Steps != 3 {
		t.Errorf("turn: %+v", out)
	}
	var res SessionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	want := []string{"user:build it", "assistant:", "tool:built call_a", "assistant:", "tool:built call_b", "assistant:built"}
	if got := texts(res.History); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("history:\n got %q\nwant %q", got, want)
	}
	// call_a: asked, then run with the answer; call_b: approved for the
	// session, run once.
	if len(runs) != 3 || len(runs[1].Decided) != 1 || !runs[1].Decided[0].Approved || runs[2].Call.ID != "call_b" || len(runs[2].ForSession) != 1 {
		t.Errorf("tool runs: %+v", runs)
	}
}

// TestWorkflowPlanModeSignal: plan mode is the workflow's state, turned
// on by a signal; the next requests run in it.
func TestWorkflowPlanModeSignal(t *testing.T) {
	f := &fakeWorker{calls: map[string]int{}, answers: []func() (ModelOutput, error){answer("one"), answer("two")}}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quietLogger{})
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterWorkflowWithOptions(Workflow, workflowOptions())
	env.RegisterActivityWithOptions(f.model, activity.RegisterOptions{Name: ActivityModel})
	env.RegisterActivityWithOptions(f.close, activity.RegisterOptions{Name: ActivityClose})
	turn := func(in string, next func()) {
		env.UpdateWorkflow(UpdateTurn, in, &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {},
			OnComplete: func(any, error) { env.RegisterDelayedCallback(next, time.Second) }}, in)
	}
	env.RegisterDelayedCallback(func() {
		turn("one", func() {
			env.SignalWorkflow(SignalPlanMode, true)
			env.RegisterDelayedCallback(func() {
				turn("two", func() { env.SignalWorkflow(SignalClose, nil) })
			}, time.Second)
		})
	}, time.Second)
	env.ExecuteWorkflow(WorkflowName, SessionInput{WorkDir: "/w"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(f.planModes) != 2 || f.planModes[0] || !f.planModes[1] {
		t.Fatalf("plan mode of the requests: %v, want [false true]", f.planModes)
	}
}
