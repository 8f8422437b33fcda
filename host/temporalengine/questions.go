package temporalengine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/kosong-host/kosong-host/host/approval"
)

// UpdateAnswerQuestions answers a tool call's pending questions (a
// QuestionAnswer); QueryQuestions lists the pending ones.
const (
	UpdateAnswerQuestions = "answer_questions"
	QueryQuestions        = "questions"
)

// QuestionAnswer is a client's answer to a call's pending questions.
type QuestionAnswer struct {
	ToolCallID string
	Answers    approval.Answers
}

// questioner is a worker's approval.UserInput for its conversations, as
// asker is for approvals: the n-th questions a call asks are answered by
// the n-th answers the workflow sent with the call; any later ones are
// recorded and dismissed for now (the call's result is thrown away and
// the call runs again once they are answered).
type questioner struct {
	mu       sync.Mutex
	answered map[string][]approval.Answers        // by call id
	rounds   map[string]int                       // questions asked so far, by call id
	asked    map[string]*approval.QuestionRequest // by call id: asked, not answered
}

func newQuestioner() *questioner {
	return &questioner{answered: map[string][]approval.Answers{}, rounds: map[string]int{}, asked: map[string]*approval.QuestionRequest{}}
}

func (q *questioner) begin(id string, answered []approval.Answers) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.answered[id], q.rounds[id] = answered, 0
	delete(q.asked, id)
}

// end returns the questions the call asked and nobody answered yet.
func (q *questioner) end(id string) *approval.QuestionRequest {
	q.mu.Lock()
	defer q.mu.Unlock()
	r := q.asked[id]
	delete(q.asked, id)
	delete(q.answered, id)
	delete(q.rounds, id)
	return r
}

// Ask implements approval.UserInput.
func (q *questioner) Ask(_ context.Context, req approval.QuestionRequest) (approval.Answers, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	id := req.ToolCallID
	n := q.rounds[id]
	q.rounds[id]++
	if a := q.answered[id]; n < len(a) {
		return a[n], nil
	}
	if _, ok := q.asked[id]; !ok {
		r := req
		q.asked[id] = &r
	}
	return approval.Answers{Dismissed: true}, nil
}

// NotPending says whether err is the workflow's refusal of an answer that
// nothing waits for (an approval or questions answered already, or never
// asked): its update validators' errors, which reach a client as text.
func NotPending(err error) bool {
	s := err.Error()
	return strings.Contains(s, "is pending") || strings.Contains(s, "are pending") || strings.Contains(s, "answered already")
}

// questions is the workflow's side: the pending questions and the answers.
type questions struct {
	pending map[string]approval.QuestionRequest // by call id
	answers map[string]approval.Answers
}

func (s *session) setQuestionHandlers(ctx workflow.Context) error {
	s.qs = questions{pending: map[string]approval.QuestionRequest{}, answers: map[string]approval.Answers{}}
	if err := workflow.SetQueryHandler(ctx, QueryQuestions, func() ([]approval.QuestionRequest, error) {
		var out []approval.QuestionRequest
		for _, id := range sortedKeys(s.qs.pending) {
			out = append(out, s.qs.pending[id])
		}
		return out, nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateAnswerQuestions, func(ctx workflow.Context, a QuestionAnswer) error {
		s.qs.answers[a.ToolCallID] = a.Answers
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, a QuestionAnswer) error {
		if _, ok := s.qs.pending[a.ToolCallID]; !ok {
			return fmt.Errorf("no questions of tool call %q are pending", a.ToolCallID)
		}
		if _, ok := s.qs.answers[a.ToolCallID]; ok {
			return fmt.Errorf("the questions of tool call %q are answered already", a.ToolCallID)
		}
		if !a.Answers.Dismissed && len(a.Answers.Answers) == 0 {
			return errors.New("no answers: give answers by question text, or dismiss the questions")
		}
		return nil
	}})
}

// awaitQuestions waits, with no activity running, for the answers to
// req and returns what the call's next run is given.
func (s *session) awaitQuestions(ctx workflow.Context, req approval.QuestionRequest, answered []approval.Answers) ([]approval.Answers, error) {
	id := req.ToolCallID
	s.qs.pending[id] = req
	defer delete(s.qs.pending, id)
	if err := workflow.Await(ctx, func() bool { _, ok := s.qs.answers[id]; return ok }); err != nil {
		return nil, err
	}
	a := s.qs.answers[id]
	delete(s.qs.answers, id)
	return append(answered, a), nil
}

// Questions lists the questions the session's tool calls wait for.
func (s *Session) Questions(ctx context.Context) ([]approval.QuestionRequest, error) {
	v, err := s.c.QueryWorkflow(ctx, s.WorkflowID(), "", QueryQuestions)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.id, err)
	}
	var out []approval.QuestionRequest
	return out, v.Get(&out)
}

// AnswerQuestions answers a call's pending questions (or dismisses them);
// the call runs again with the answers. The first answer wins; a later
// one is refused.
func (s *Session) AnswerQuestions(ctx context.Context, a QuestionAnswer) error {
	return s.update(ctx, UpdateAnswerQuestions, a)
}

// update runs an update of the session's workflow and waits for its end.
func (s *Session) update(ctx context.Context, name string, arg any) error {
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: s.WorkflowID(), UpdateName: name,
		Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("session %s: %w", s.id, err)
	}
	return nil
}
