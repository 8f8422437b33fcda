package temporalengine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.temporal.io/sdk/testsuite"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// readTool answers the path it is asked for.
type readTool struct{}

func (readTool) Spec() toolset.Spec {
	return toolset.Spec{Name: "Read", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (readTool) Call(_ context.Context, _ string, args json.RawMessage) toolset.Result {
	var p struct{ Path string }
	_ = json.Unmarshal(args, &p)
	return toolset.Result{Kind: toolset.Ok, Output: []providers.ContentPart{providers.TextPart("contents of " + p.Path)}}
}

// stepsProvider answers step n (counted from 0) with steps[n]'s calls,
// and "done" past them.
type stepsProvider struct {
	mu    sync.Mutex
	n     int
	steps [][]providers.ToolCall
}

func (p *stepsProvider) Name() string  { return "fake" }
func (p *stepsProvider) Model() string { return "fake" }
func (p *stepsProvider) Stream(context.Context, providers.Request) (providers.Stream, error) {
	out, _ := p.next()
	var evs []providers.Event
	for _, c := range out.Message.ToolCalls {
		evs = append(evs, providers.Event{Kind: providers.EventToolCall, ToolCall: &c})
	}
	if t := out.Message.Text(); t != "" {
		evs = append(evs, providers.Event{Kind: providers.EventText, Text: t})
	}
	return &events{evs: evs}, nil
}

func (p *stepsProvider) next() (ModelOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.n
	p.n++
	if n >= len(p.steps) {
		return ModelOutput{Message: providers.Message{Role: providers.RoleAssistant, Content: []providers.ContentPart{providers.TextPart("done")}}}, nil
	}
	// Call ids are unique to the step, as models number them.
	calls := make([]providers.ToolCall, len(p.steps[n]))
	for i, c := range p.steps[n] {
		c.ID = fmt.Sprintf("call_%d_%d", n, i)
		calls[i] = c
	}
	return ModelOutput{Message: providers.Message{Role: providers.RoleAssistant, ToolCalls: calls}}, nil
}

func readToolset(t *testing.T) *toolset.Toolset {
	ts := toolset.New(hclog.NewNullLogger())
	if err := ts.Add(readTool{}); err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestWorkflowRepeatGuardAsInProcess: the same model answers give the
// same turn on the workflow as in process: identical calls of a step
// share one run, reminders at the 3rd, 5th and 8th consecutive repeat,
// and the turn stopped at the 12th (that call not run) with
// tool_call_repeat; another call in between starts the count again.
func TestWorkflowRepeatGuardAsInProcess(t *testing.T) {
	read := func(args string) providers.ToolCall { return providers.ToolCall{Name: "Read", Arguments: args} }
	same := func(n int, calls ...providers.ToolCall) [][]providers.ToolCall {
		var out [][]providers.ToolCall
		for range n {
			out = append(out, calls)
		}
		return out
	}
	tests := []struct {
		name   string
		steps  [][]providers.ToolCall
		reason loop.StopReason
		steps_ int
		runs   int
	}{
		// Step 1 makes the call twice (the same canonical arguments):
		// one run; step 12 is stopped without running.
		{"stopped at the 12th", append([][]providers.ToolCall{{read(`{"path":"a"}`), read(`{ "path" : "a" }`)}}, same(13, read(`{"path":"a"}`))...),
			loop.StopToolCallRepeat, 12, 11},
		{"broken by another call", append(append(same(6, read(`{"path":"a"}`)), []providers.ToolCall{read(`{"path":"b"}`)}), same(6, read(`{"path":"a"}`))...),
			loop.StopDone, 14, 13},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// In process.
			inproc := &stepsProvider{steps: tt.steps}
			l, err := loop.New(loop.Config{Provider: inproc, Toolset: readToolset(t)})
			if err != nil {
				t.Fatal(err)
			}
			want, err := l.Turn(context.Background(), "read it")
			if err != nil {
				t.Fatal(err)
			}
			if want.Reason != tt.reason || want.Steps != tt.steps_ {
				t.Fatalf("in process: %+v, want %s after %d steps", want, tt.reason, tt.steps_)
			}

			// On the workflow.
			wf := &stepsProvider{steps: tt.steps}
			ts := readToolset(t)
			var mu sync.Mutex
			runs := 0
			model := func(context.Context, ModelInput) (ModelOutput, error) { return wf.next() }
			tool := func(ctx context.Context, in ToolInput) (ToolOutput, error) {
				mu.Lock()
				runs++
				mu.Unlock()
				return ToolOutput{Message: ts.Handle(ctx, in.Call).Result().ToolMessage()}, nil
			}
			env := sessionTestEnv(model, tool, func(context.Context, string) error { return nil })
			var out TurnOutcome
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(UpdateTurn, "turn", &testsuite.TestUpdateCallback{
					OnReject: func(err error) { t.Errorf("turn rejected: %v", err) }, OnAccept: func() {},
					OnComplete: func(v any, err error) {
						out = v.(TurnOutcome)
						env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalClose, nil) }, time.Second)
					},
				}, "read it")
			}, time.Second)
			env.ExecuteWorkflow(WorkflowName, SessionInput{WorkDir: "/w"})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("%+v", err)
			}
			var res SessionResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if out.Reason != want.Reason || out.Steps != want.Steps {
				t.Errorf("workflow turn: %s after %d steps, in process %s after %d", out.Reason, out.Steps, want.Reason, want.Steps)
			}
			if runs != tt.runs {
				t.Errorf("the workflow ran the tool %d times, want %d", runs, tt.runs)
			}
			got, _ := json.MarshalIndent(res.History, "", " ")
			exp, _ := json.MarshalIndent(l.History(), "", " ")
			if string(got) != string(exp) {
				t.Errorf("workflow history differs from in process:\n got %s\nwant %s", got, exp)
			}
			if n := strings.Count(strings.Join(texts(res.History), "\n"), "in a row"); n < 3 {
				t.Errorf("%d reminders in the history", n)
			}
		})
	}
}
