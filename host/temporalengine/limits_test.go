package temporalengine

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// bigTool answers with n bytes of text.
type bigTool struct{ n int }

func (b bigTool) Spec() toolset.Spec {
	return toolset.Spec{Name: "Big", Description: "A large output.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (b bigTool) Call(context.Context, string, json.RawMessage) toolset.Result {
	return toolset.Result{Kind: toolset.Ok, Output: []providers.ContentPart{providers.TextPart(strings.Repeat("x", b.n))}}
}

// bigProvider calls Big after the user's message, then answers; it
// records the tool results it was sent.
type bigProvider struct {
	mu   *sync.Mutex
	seen *[]string
}

func (bigProvider) Name() string  { return "fake" }
func (bigProvider) Model() string { return "fake" }
func (p bigProvider) Stream(_ context.Context, req providers.Request) (providers.Stream, error) {
	last := req.History[len(req.History)-1]
	if last.Role == providers.RoleUser {
		return &events{evs: []providers.Event{{Kind: providers.EventToolCall,
			ToolCall: &providers.ToolCall{ID: "call_big", Name: "Big", Arguments: "{}"}}}}, nil
	}
	p.mu.Lock()
	*p.seen = append(*p.seen, last.Text())
	p.mu.Unlock()
	return &events{evs: []providers.Event{{Kind: providers.EventText, Text: "read it"}}}, nil
}

type bigHosted struct {
	ts *toolset.Toolset
	p  bigProvider
}

func (h bigHosted) Provider() providers.ChatProvider { return h.p }
func (h bigHosted) System() string                   { return "system" }
func (h bigHosted) Toolset() *toolset.Toolset        { return h.ts }
func (h bigHosted) Close()                           {}

// runOne runs one turn of a session from in on the real activities of a
// worker whose tool outputs n bytes and whose claim checks go to dir.
func runOne(t *testing.T, dir string, n int, in SessionInput) (TurnOutcome, SessionResult, []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	acts := NewActivities(func(context.Context, OpenRequest, approval.Asker) (Hosted, error) {
		ts := toolset.New(hclog.NewNullLogger())
		if err := ts.Add(bigTool{n: n}); err != nil {
			return nil, err
		}
		return bigHosted{ts: ts, p: bigProvider{mu: &mu, seen: &seen}}, nil
	})
	acts.StoreClaims(dir, 1024)
	t.Cleanup(acts.Close)
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(quietLogger{})
	env := suite.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	Register(env, acts)
	var out TurnOutcome
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateTurn, "turn", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("turn rejected: %v", err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) {
				out = v.(TurnOutcome)
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalClose, nil) }, time.Second)
			},
		}, "read the big one")
	}, time.Second)
	env.ExecuteWorkflow(WorkflowName, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("%+v", err)
	}
	var res SessionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return out, res, seen
}

// TestClaimCheck: a tool output over the threshold is stored in the
// worker's claim-check directory; the history carries the reference and
// the model request reads the output back; a missing file fails the
// turn with an error naming it.
func TestClaimCheck(t *testing.T) {
	dir := t.TempDir()
	out, res, seen := runOne(t, dir, 4000, SessionInput{WorkDir: "/w"})
	if out.Error != "" || len(res.History) != 4 {
		t.Fatalf("turn: %+v, history %q", out, texts(res.History))
	}
	tool := res.History[2]
	name := claimOf(tool)
	if name == "" || tool.ToolCallID != "call_big" {
		t.Fatalf("the tool message in the history is not a claim check: %.200q", tool.Text())
	}
	if b, _ := json.Marshal(res.History); len(b) > 2000 {
		t.Errorf("the workflow's history is %d bytes: the output was not kept out of it", len(b))
	}
	if len(seen) != 1 || seen[0] != strings.Repeat("x", 4000) {
		t.Errorf("the model was not sent the stored output (got %d results)", len(seen))
	}
	// The session's claims are removed when it closes.
	path := filepath.Join(dir, claimFolderName("default-test-workflow-id"), name+".json")
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the claim check of the closed session: %v, want it removed", err)
	}

	// A small output stays in the history.
	_, res2, _ := runOne(t, t.TempDir(), 10, SessionInput{WorkDir: "/w"})
	if len(res2.History) != 4 || claimOf(res2.History[2]) != "" || res2.History[2].Text() != "xxxxxxxxxx" {
		t.Errorf("a small output: %q", texts(res2.History))
	}

	// The claim-check file is gone: the next model request fails, naming it.
	history := append(slices.Clone(res.History), providers.Message{Role: providers.RoleAssistant, Content: []providers.ContentPart{providers.TextPart("ok")}})
	out, _, _ = runOne(t, dir, 10, SessionInput{WorkDir: "/w", History: history})
	if !strings.Contains(out.Error, path) || !strings.Contains(out.Error, "call_big") {
		t.Errorf("missing claim check: turn error %q, want one naming %s", out.Error, path)
	}
}

func TestClaimsErrors(t *testing.T) {
	big := toolText("call_1", strings.Repeat("y", 2000), false)
	dir := t.TempDir()
	stored, err := claims{dir: dir, over: 100}.store("s1", big)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s1", claimOf(stored)+".json")
	tests := []struct {
		name    string
		c       claims
		prepare func()
		want    string
	}{
		{name: "no directory to store in", c: claims{over: 100}, want: "no claim-check directory"},
		{name: "altered file", c: claims{dir: dir, over: 100}, prepare: func() { os.WriteFile(path, []byte(`{"role":"tool"}`), 0o600) }, want: "does not match its hash"},
		{name: "no directory to read from", c: claims{over: 100}, want: "no claim-check directory"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.prepare != nil {
				tt.prepare()
			}
			var err error
			if i == 0 {
				_, err = tt.c.store("s1", big)
			} else {
				_, err = tt.c.resolve("s1", []providers.Message{stored})
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestContinueAsNew: past the event threshold the session continues as a
// new run once its turn ends, carrying its history, counters, plan mode
// and approvals for the session; the next run's turn goes on from them.
func TestContinueAsNew(t *testing.T) {
	shell := providers.ToolCall{ID: "call_s", Name: "Shell", Arguments: `{"command":"make"}`}
	var forSession [][]string
	f := &fakeWorker{calls: map[string]int{}, answers: []func() (ModelOutput, error){answer("one"), answer("", shell), answer("two")}}
	tool := func(ctx context.Context, in ToolInput) (ToolOutput, error) {
		forSession = append(forSession, in.ForSession)
		return ok("made")(0)
	}
	newEnv := func() *testsuite.TestWorkflowEnvironment {
		env := sessionTestEnv(f.model, tool, f.close)
		return env
	}
	turn := func(env *testsuite.TestWorkflowEnvironment, in string, then func()) {
		env.UpdateWorkflow(UpdateTurn, in, &testsuite.TestUpdateCallback{OnReject: func(err error) { t.Error(err) }, OnAccept: func() {},
			OnComplete: func(v any, err error) {
				if o := v.(TurnOutcome); err != nil || o.Error != "" {
					t.Errorf("turn %q: %+v %v", in, o, err)
				}
				if then != nil {
					env.RegisterDelayedCallback(then, time.Second)
				}
			}}, in)
	}

	// First run: plan mode on, one turn, then past the threshold.
	env := newEnv()
	env.SetCurrentHistoryLength(100)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalPlanMode, true)
		turn(env, "one", nil)
	}, time.Second)
	env.ExecuteWorkflow(WorkflowName, SessionInput{WorkDir: "/w", ContinueAfter: 50, Carried: &Carried{ForSession: []string{"shell:run command"}}})
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("the workflow ended with %v, want a continue-as-new", err)
	}
	var next SessionInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	wantFirst := []string{"user:one", "user:" + ContinuedNote, "assistant:one"}
	if got := texts(next.History); strings.Join(got, "|") != strings.Join(wantFirst, "|") {
		t.Errorf("carried history %q, want %q", got, wantFirst)
	}
	if c := next.Carried; c == nil || c.Turns != 1 || c.Steps != 1 || c.Runs != 1 || !slices.Equal(c.ForSession, []string{"shell:run command"}) || !next.PlanMode || next.ContinueAfter != 50 {
		t.Fatalf("carried state: %+v plan mode %v", c, next.PlanMode)
	}
	if f.closed != 1 {
		t.Errorf("the first run closed the worker's conversation %d times, want 1", f.closed)
	}

	// The next run: its turn goes on from the carried state.
	env = newEnv()
	env.RegisterDelayedCallback(func() {
		turn(env, "two", func() { env.SignalWorkflow(SignalClose, nil) })
	}, time.Second)
	env.ExecuteWorkflow(WorkflowName, next)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("%+v", err)
	}
	var res SessionResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	want := append(wantFirst, "user:two", "user:"+ContinuedNote, "assistant:", "tool:made", "assistant:two")
	if got := texts(res.History); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("history:\n got %q\nwant %q", got, want)
	}
	if res.Turns != 2 || res.Steps != 3 {
		t.Errorf("turns %d steps %d, want 2 and 3", res.Turns, res.Steps)
	}
	if len(forSession) != 1 || !slices.Equal(forSession[0], []string{"shell:run command"}) {
		t.Errorf("the tool call's approvals for the session: %q", forSession)
	}
	if len(f.planModes) != 3 || !f.planModes[0] || !f.planModes[2] {
		t.Errorf("plan mode of the requests: %v, want all on", f.planModes)
	}
}
