package conversation

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
)

// Who decided an approval (loop.ApprovalDecided.Answer), as the terminal
// reports it too.
const (
	AnswerYolo    = "yolo"
	AnswerUser    = "user"
	AnswerSession = "session"
)

// Approvals is the approval flow of a conversation: yolo approves
// everything; otherwise actions approved for the session pass, and the
// rest are asked through the front end (approval.Session). Every decision
// is reported as a loop.ApprovalDecided event. Yolo can be switched while
// the conversation runs (ACP's modes).
type Approvals struct {
	session *approval.Session
	obs     loop.Observer
	yolo    atomic.Bool
}

// NewApprovals returns the approval flow that asks through ask and reports
// to obs.
func NewApprovals(ask approval.Asker, obs loop.Observer) *Approvals {
	a := &Approvals{obs: obs}
	a.session = approval.NewSession(func(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
		if ask == nil {
			return approval.Reject, "", nil
		}
		answer, feedback, err := ask(ctx, req)
		if rec, ok := ctx.Value(askedKey{}).(*asked); ok && err == nil {
			rec.set(answer)
		}
		return answer, feedback, err
	})
	return a
}

// SetYolo switches approving everything on or off.
func (a *Approvals) SetYolo(on bool) { a.yolo.Store(on) }

// Yolo reports whether everything is approved.
func (a *Approvals) Yolo() bool { return a.yolo.Load() }

type askedKey struct{}

type asked struct {
	mu     sync.Mutex
	ok     bool
	answer approval.Answer
}

func (r *asked) set(a approval.Answer) {
	r.mu.Lock()
	r.ok, r.answer = true, a
	r.mu.Unlock()
}

// Decide implements approval.Decider.
func (a *Approvals) Decide(ctx context.Context, req approval.Request) (approval.Decision, error) {
	if a.yolo.Load() {
		d := approval.Decision{Approved: true}
		a.report(req, d, AnswerYolo, false)
		return d, nil
	}
	rec := &asked{}
	d, err := a.session.Decide(context.WithValue(ctx, askedKey{}, rec), req)
	if err != nil {
		return d, err
	}
	answer, forSession := AnswerSession, false
	rec.mu.Lock()
	if rec.ok {
		answer, forSession = AnswerUser, rec.answer == approval.ApproveForSession
	}
	rec.mu.Unlock()
	a.report(req, d, answer, forSession)
	return d, nil
}

func (a *Approvals) report(req approval.Request, d approval.Decision, answer string, forSession bool) {
	if a.obs == nil {
		return
	}
	a.obs.Observe(loop.ApprovalDecided{ToolCallID: req.ToolCallID, ToolName: req.ToolName, Action: req.Action,
		Description: req.Description, Approved: d.Approved, Feedback: d.Feedback, Answer: answer, ForSession: forSession})
}
