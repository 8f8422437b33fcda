package temporalengine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.temporal.io/sdk/testsuite"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/temporalengine/temporaltest"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// TestQuestioner: a worker's questioner answers a call's n-th questions
// with the n-th answers the workflow sent, and records the first
// unanswered ones (dismissed for now) for the workflow to ask.
func TestQuestioner(t *testing.T) {
	req := approval.QuestionRequest{ToolCallID: "c1", ToolName: "AskUserQuestion", Questions: []approval.Question{{Question: "Which?"}}}
	second := req
	second.Questions = []approval.Question{{Question: "And then?"}}
	yes := approval.Answers{Answers: map[string]string{"Which?": "A"}}
	tests := []struct {
		name     string
		answered []approval.Answers
		asks     []approval.QuestionRequest
		want     []approval.Answers
		recorded string // the question recorded ("" none)
	}{
		{"nothing answered: recorded", nil, []approval.QuestionRequest{req}, []approval.Answers{{Dismissed: true}}, "Which?"},
		{"answered", []approval.Answers{yes}, []approval.QuestionRequest{req}, []approval.Answers{yes}, ""},
		{"answered, then asks more", []approval.Answers{yes}, []approval.QuestionRequest{req, second},
			[]approval.Answers{yes, {Dismissed: true}}, "And then?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQuestioner()
			q.begin("c1", tt.answered)
			for i, r := range tt.asks {
				got, err := q.Ask(context.Background(), r)
				if err != nil || got.Dismissed != tt.want[i].Dismissed || got.Answers["Which?"] != tt.want[i].Answers["Which?"] {
					t.Fatalf("Ask %d: %+v %v, want %+v", i, got, err, tt.want[i])
				}
			}
			got := q.end("c1")
			if (got != nil) != (tt.recorded != "") || (got != nil && got.Questions[0].Question != tt.recorded) {
				t.Fatalf("recorded %+v, want %q", got, tt.recorded)
			}
			if q.end("c1") != nil {
				t.Fatal("questions are recorded twice")
			}
		})
	}
}

// TestWorkflowQuestionsAnHourLater: a call that asks the user questions
// waits for the answers in the workflow, with no activity running;
// answered (or dismissed) an hour later in workflow time, it runs again
// with the answers and the turn resumes.
func TestWorkflowQuestionsAnHourLater(t *testing.T) {
	tests := []struct {
		name   string
		answer approval.Answers
		want   string
	}{
		{"answered", approval.Answers{Answers: map[string]string{"Which colour?": "Blue"}}, "tool:the user chose Blue"},
		{"dismissed", approval.Answers{Dismissed: true}, "tool:the user dismissed the questions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ask := providers.ToolCall{ID: "call_q", Name: "AskUserQuestion", Arguments: `{"questions":[{"question":"Which colour?"}]}`}
			qreq := &approval.QuestionRequest{ToolCallID: "call_q", ToolName: "AskUserQuestion",
				Questions: []approval.Question{{Question: "Which colour?", Options: []approval.QuestionOption{{Label: "Blue"}, {Label: "Red"}}}}}
			var mu sync.Mutex
			var runs []ToolInput
			f := &fakeWorker{calls: map[string]int{}, answers: []func() (ModelOutput, error){answer("", ask), answer("noted")}}
			tool := func(ctx context.Context, in ToolInput) (ToolOutput, error) {
				mu.Lock()
				runs = append(runs, in)
				mu.Unlock()
				switch {
				case len(in.Answered) == 0:
					return ToolOutput{Questions: qreq}, nil
				case in.Answered[0].Dismissed:
					return ok("the user dismissed the questions")(0)
				default:
					return ok("the user chose " + in.Answered[0].Answers["Which colour?"])(0)
				}
			}
			env := sessionTestEnv(f.model, tool, f.close)
			start := env.Now()
			var answeredAt time.Time
			var out TurnOutcome
			busy, refused := false, false
			env.RegisterDelayedCallback(func() {
				env.UpdateWorkflow(UpdateTurn, "turn", &testsuite.TestUpdateCallback{
					OnReject: func(err error) { t.Errorf("turn rejected: %v", err) },
					OnComplete: func(v any, err error) {
						out = v.(TurnOutcome)
						env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalClose, nil) }, time.Second)
					},
				}, "pick a colour")
			}, time.Second)
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(QueryQuestions)
				if err != nil {
					t.Fatal(err)
				}
				var pending []approval.QuestionRequest
				if err := v.Get(&pending); err != nil || len(pending) != 1 || pending[0].ToolCallID != "call_q" || pending[0].Questions[0].Options[0].Label != "Blue" {
					t.Fatalf("questions pending after an hour: %+v, %v", pending, err)
				}
				env.UpdateWorkflow(UpdateAnswerQuestions, "no such call", &testsuite.TestUpdateCallback{
					OnAccept: func() { t.Error("answers to a call that asks nothing were accepted") },
					OnReject: func(error) { refused = true }, OnComplete: func(any, error) {},
				}, QuestionAnswer{ToolCallID: "call_zzz", Answers: tt.answer})
				env.UpdateWorkflow(UpdateTurn, "second turn", &testsuite.TestUpdateCallback{
					OnAccept: func() { t.Error("a second turn was accepted while one waits for answers") },
					OnReject: func(err error) { busy = strings.Contains(err.Error(), "already in progress") }, OnComplete: func(any, error) {},
				}, "meanwhile")
				answeredAt = env.Now()
				env.UpdateWorkflow(UpdateAnswerQuestions, "answer", &testsuite.TestUpdateCallback{
					OnReject: func(err error) { t.Errorf("answers rejected: %v", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
				}, QuestionAnswer{ToolCallID: "call_q", Answers: tt.answer})
			}, time.Hour)
			env.ExecuteWorkflow(WorkflowName, SessionInput{WorkDir: "/w"})
			if err := env.GetWorkflowError(); err != nil {
				t.Fatalf("%+v", err)
			}
			if !busy || !refused {
				t.Errorf("while waiting: second turn refused as busy %v, answers to another call refused %v", busy, refused)
			}
			if answeredAt.Sub(start) < time.Hour {
				t.Errorf("answered after %s of workflow time, want an hour", answeredAt.Sub(start))
			}
			if out.Reason != loop.StopDone || out.Steps != 2 {
				t.Errorf("turn: %+v", out)
			}
			var res SessionResult
			if err := env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			want := []string{"user:pick a colour", "assistant:", tt.want, "assistant:noted"}
			if got := texts(res.History); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("history:\n got %q\nwant %q", got, want)
			}
			if len(runs) != 2 || len(runs[0].Answered) != 0 || len(runs[1].Answered) != 1 {
				t.Errorf("tool runs: %+v", runs)
			}
		})
	}
}

// askTool is Noop asking the user which colour, through the worker's
// UserInput, and answering what the user said.
type askTool struct{ q approval.UserInput }

func (a askTool) Spec() toolset.Spec {
	return toolset.Spec{Name: "Noop", Description: "Asks a question.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (a askTool) Call(ctx context.Context, id string, _ json.RawMessage) toolset.Result {
	ans, err := a.q.Ask(ctx, approval.QuestionRequest{ToolCallID: id, ToolName: "Noop",
		Questions: []approval.Question{{Question: "Which colour?", Options: []approval.QuestionOption{{Label: "Blue"}, {Label: "Red"}}}}})
	if err != nil || ans.Dismissed {
		return toolset.Result{Kind: toolset.Ok, Output: []providers.ContentPart{providers.TextPart("no answer")}}
	}
	return toolset.Result{Kind: toolset.Ok, Output: []providers.ContentPart{providers.TextPart("the user chose " + ans.Answers["Which colour?"])}}
}

// TestEngineQuestions: on the real dev server, a tool's question waits in
// the workflow until a client answers it; the call runs again with the
// answer and the turn ends; a second answer is refused.
func TestEngineQuestions(t *testing.T) {
	srv := temporaltest.Start(t)
	c := srv.Dial(t)
	acts := NewActivities(func(_ context.Context, req OpenRequest, _ approval.Asker) (Hosted, error) {
		ts := toolset.New(hclog.NewNullLogger())
		if req.Questions == nil {
			return nil, errors.New("the worker offers no UserInput to an attended session")
		}
		if err := ts.Add(askTool{q: req.Questions}); err != nil {
			return nil, err
		}
		return &hosted{ts: ts}, nil
	})
	startTestWorker(t, c, acts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, c, "q", SessionInput{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	type turn struct {
		res loop.TurnResult
		err error
	}
	done := make(chan turn, 1)
	go func() { r, err := s.Turn(ctx, "pick"); done <- turn{r, err} }()
	var pending []approval.QuestionRequest
	for len(pending) == 0 {
		select {
		case r := <-done:
			t.Fatalf("the turn ended before its question was answered: %+v, %v", r.res, r.err)
		case <-ctx.Done():
			t.Fatal("no question pending within 2 minutes")
		case <-time.After(100 * time.Millisecond): // polls the query
		}
		if pending, err = s.Questions(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if pending[0].Questions[0].Question != "Which colour?" {
		t.Fatalf("pending: %+v", pending)
	}
	a := QuestionAnswer{ToolCallID: pending[0].ToolCallID, Answers: approval.Answers{Answers: map[string]string{"Which colour?": "Blue"}}}
	if err := s.AnswerQuestions(ctx, a); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.Reason != loop.StopDone || r.res.Steps != 2 {
		t.Fatalf("turn: %+v, %v", r.res, r.err)
	}
	if h := strings.Join(texts(s.History()), "|"); !strings.Contains(h, "tool:the user chose Blue") {
		t.Errorf("history %q", h)
	}
	if err := s.AnswerQuestions(ctx, a); err == nil || !strings.Contains(err.Error(), "no questions of tool call") {
		t.Errorf("a second answer: %v", err)
	}
	s.Close()
}
