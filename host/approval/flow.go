package approval

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Who decided an approval (loop.ApprovalDecided.Answer).
const (
	// AnswerYolo: approved because everything is (--yolo, /yolo, an
	// editor's yolo mode).
	AnswerYolo = "yolo"
	// AnswerUnattended: rejected because nobody can be asked.
	AnswerUnattended = "unattended"
	// AnswerUser: the user answered.
	AnswerUser = "user"
	// AnswerSession: approved because the user approved the action for
	// the session earlier.
	AnswerSession = "session"
)

// Mode says how a conversation answers approval requests.
type Mode int

// The approval modes.
const (
	// ModeAsk asks the user (Session: actions approved for the session are
	// remembered). Yolo can be switched on and off (Flow.SetYolo).
	ModeAsk Mode = iota
	// ModeYolo approves everything (--yolo).
	ModeYolo
	// ModeUnattended rejects everything with UnattendedFeedback, which
	// tells the model (and the user) that --yolo allows it: one-shot runs
	// without --yolo.
	ModeUnattended
)

// String names the mode, for the banner.
func (m Mode) String() string {
	switch m {
	case ModeYolo:
		return "yolo (every action approved)"
	case ModeUnattended:
		return "unattended (actions that need approval are rejected; --yolo allows them)"
	}
	return "ask"
}

// Decided is one decision of a Flow, as it is reported.
type Decided struct {
	Request  Request
	Decision Decision
	// Answer is who decided: AnswerYolo, AnswerUnattended, AnswerUser or
	// AnswerSession.
	Answer string
	// ForSession: the user approved the action for the session.
	ForSession bool
	// Waited is how long the user took to answer (0 when not asked).
	Waited time.Duration
}

// Flow is the approval flow of a conversation, whatever its front end:
// its mode's decisions, each one reported. In ModeAsk yolo can be switched
// on and off while the conversation runs (/yolo, an editor's modes).
type Flow struct {
	mode    Mode
	session *Session
	report  func(Decided)
	yolo    atomic.Bool
	now     func() time.Time
	// noYolo is why yolo may not be switched on (ForbidYolo).
	noYolo error
}

// NewFlow returns the flow of mode; ask asks the user in ModeAsk (nil:
// requests are rejected); every decision goes to report (nil drops them).
func NewFlow(mode Mode, ask Asker, report func(Decided)) *Flow {
	f := &Flow{mode: mode, report: report, now: time.Now}
	if report == nil {
		f.report = func(Decided) {}
	}
	f.session = NewSession(func(ctx context.Context, req Request) (Answer, string, error) {
		if ask == nil {
			return Reject, "", nil
		}
		start := f.now()
		answer, feedback, err := ask(ctx, req)
		if rec, ok := ctx.Value(askedKey{}).(*asked); ok && err == nil {
			rec.set(answer, f.now().Sub(start))
		}
		return answer, feedback, err
	})
	return f
}

// Decide implements Decider.
func (f *Flow) Decide(ctx context.Context, req Request) (Decision, error) {
	switch {
	case (f.mode == ModeYolo || f.yolo.Load()) && f.noYolo == nil:
		d := Decision{Approved: true}
		f.report(Decided{Request: req, Decision: d, Answer: AnswerYolo})
		return d, nil
	case f.mode == ModeUnattended:
		d := Decision{Feedback: UnattendedFeedback}
		f.report(Decided{Request: req, Decision: d, Answer: AnswerUnattended})
		return d, nil
	}
	// The asker records the user's answer, which tells a decision of the
	// user from one remembered for the session.
	rec := &asked{}
	d, err := f.session.Decide(context.WithValue(ctx, askedKey{}, rec), req)
	if err != nil {
		return d, err
	}
	out := Decided{Request: req, Decision: d, Answer: AnswerSession}
	if answer, waited, ok := rec.get(); ok {
		out.Answer, out.ForSession, out.Waited = AnswerUser, answer == ApproveForSession, waited
	}
	f.report(out)
	return d, nil
}

// SetYolo switches approving everything on or off; it only switches a
// flow in ModeAsk, and on only where yolo is not forbidden (YoloForbidden),
// and reports whether it did.
func (f *Flow) SetYolo(on bool) bool {
	if f.mode != ModeAsk || (on && f.noYolo != nil) {
		return false
	}
	f.yolo.Store(on)
	return true
}

// ForbidYolo makes the flow refuse yolo, saying err (the admin policy's
// refusal): SetYolo(true) does nothing and a flow made in ModeYolo asks
// instead. Call it before the flow is in use.
func (f *Flow) ForbidYolo(err error) { f.noYolo = err }

// YoloForbidden is why yolo cannot be switched on; nil when it can.
func (f *Flow) YoloForbidden() error { return f.noYolo }

// Yolo reports whether everything is approved now.
func (f *Flow) Yolo() bool { return f.Mode() == ModeYolo }

// Mode is the current mode: ModeYolo while yolo is switched on.
func (f *Flow) Mode() Mode {
	if f.noYolo != nil && f.mode == ModeYolo {
		return ModeAsk
	}
	if f.yolo.Load() {
		return ModeYolo
	}
	return f.mode
}

// Base is the mode the flow was made with.
func (f *Flow) Base() Mode { return f.mode }

type askedKey struct{}

// asked is the user's answer to one request, if they were asked.
type asked struct {
	mu     sync.Mutex
	ok     bool
	answer Answer
	waited time.Duration
}

func (r *asked) set(a Answer, waited time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ok, r.answer, r.waited = true, a, waited
}

func (r *asked) get() (Answer, time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.answer, r.waited, r.ok
}
