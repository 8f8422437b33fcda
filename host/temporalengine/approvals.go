package temporalengine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.temporal.io/sdk/workflow"

	"github.com/kosong-host/kosong-host/host/approval"
)

// UpdateApprove answers a pending approval (an Answer); QueryApprovals
// lists the pending ones.
const (
	UpdateApprove  = "approve"
	QueryApprovals = "approvals"
)

// Pending is an approval a tool call waits for, with no process busy: the
// workflow holds it until an attached client answers.
type Pending struct {
	Request approval.Request
}

// Answer is a client's answer to a pending approval.
type Answer struct {
	ToolCallID string
	Answer     approval.Answer
	// Feedback goes to the model with a rejection.
	Feedback string
}

// Decided is an answer given to a tool call, by the key of what it approves.
type Decided struct {
	Key      string
	Approved bool
	Feedback string
}

// pendingFeedback rejects the request of a call whose answer is not in yet;
// the call is run again once it is.
const pendingFeedback = "the approval is asked of the session's clients"

// asker is a worker's approval.Asker for its conversations: it answers
// from the decisions the workflow sent with the call (and the actions
// approved for the session) and records any other request, rejecting it
// for now.
type asker struct {
	mu      sync.Mutex
	calls   map[string][]Decided         // by call id
	session map[string]bool              // approved for the session, by key
	asked   map[string]*approval.Request // by call id: asked, not decided
}

func newAsker() *asker {
	return &asker{calls: map[string][]Decided{}, session: map[string]bool{}, asked: map[string]*approval.Request{}}
}

func (a *asker) begin(id string, decided []Decided, forSession []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls[id] = decided
	for _, k := range forSession {
		a.session[k] = true
	}
	delete(a.asked, id)
}

// end returns the request the call asked and nobody decided.
func (a *asker) end(id string) *approval.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.asked[id]
	delete(a.asked, id)
	delete(a.calls, id)
	return r
}

// Ask implements approval.Asker.
func (a *asker) Ask(_ context.Context, req approval.Request) (approval.Answer, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := req.SessionKey()
	if a.session[key] {
		return approval.Approve, "", nil
	}
	for _, d := range a.calls[req.ToolCallID] {
		if d.Key == key {
			if d.Approved {
				return approval.Approve, "", nil
			}
			return approval.Reject, d.Feedback, nil
		}
	}
	if _, ok := a.asked[req.ToolCallID]; !ok {
		r := req
		a.asked[req.ToolCallID] = &r
	}
	return approval.Reject, pendingFeedback, nil
}

// approvals is the workflow's side: the pending requests and the answers.
type approvals struct {
	pending    map[string]approval.Request // by call id
	answers    map[string]Answer
	forSession []string
}

func (s *session) setApprovalHandlers(ctx workflow.Context) error {
	s.appr = approvals{pending: map[string]approval.Request{}, answers: map[string]Answer{}}
	if err := workflow.SetQueryHandler(ctx, QueryApprovals, func() ([]Pending, error) {
		var out []Pending
		for _, id := range sortedKeys(s.appr.pending) {
			out = append(out, Pending{Request: s.appr.pending[id]})
		}
		return out, nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, UpdateApprove, func(ctx workflow.Context, a Answer) error {
		s.appr.answers[a.ToolCallID] = a
		return nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, a Answer) error {
		if _, ok := s.appr.pending[a.ToolCallID]; !ok {
			return fmt.Errorf("no approval of tool call %q is pending", a.ToolCallID)
		}
		if a.Answer < approval.Approve || a.Answer > approval.Reject {
			return errors.New("the answer is approve, approve for the session, or reject")
		}
		return nil
	}})
}

// await waits, with no activity running, for the answer to req and
// returns what the call's next run is given.
func (s *session) await(ctx workflow.Context, req approval.Request, decided []Decided) ([]Decided, error) {
	id := req.ToolCallID
	s.appr.pending[id] = req
	defer delete(s.appr.pending, id)
	if err := workflow.Await(ctx, func() bool { _, ok := s.appr.answers[id]; return ok }); err != nil {
		return nil, err
	}
	a := s.appr.answers[id]
	delete(s.appr.answers, id)
	key := req.SessionKey()
	if a.Answer == approval.ApproveForSession && !slices.Contains(s.appr.forSession, key) {
		s.appr.forSession = append(s.appr.forSession, key)
	}
	return append(decided, Decided{Key: key, Approved: a.Answer != approval.Reject, Feedback: a.Feedback}), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
