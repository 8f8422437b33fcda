// Package approval decides whether a tool may do what it asks: approve all
// (--yolo), deny all (unattended runs), or ask the user, remembering actions
// approved for the session.
package approval

import (
	"context"
	"encoding/json"
	"sync"
)

// Request is one approval request from a running tool call. The host fills
// Plugin and ToolName from what it knows of the call (never from what a
// plugin claims); Action, Description and Display are the requester's own
// words, which front ends show as Plugin's.
type Request struct {
	ToolCallID string
	// Plugin is who asks: a plugin's name, or the host-side source of a
	// built-in approval ("mcp:SERVER", "wire").
	Plugin      string
	ToolName    string
	Action      string
	Description string
	Display     []Display
}

// SessionKey is what "approve for this session" remembers: the plugin, the
// tool and the action together, so approving one tool's action never
// approves another's.
func (r Request) SessionKey() string {
	return r.Plugin + "\x00" + r.ToolName + "\x00" + r.Action
}

// Display is a display block attached to a request (a diff, a command...).
type Display struct {
	Kind string
	Data json.RawMessage
}

// Decision is the answer.
type Decision struct {
	Approved bool
	Feedback string
}

// Decider answers approval requests. It may block (asking a user); it must
// return when ctx is done.
type Decider interface {
	Decide(ctx context.Context, req Request) (Decision, error)
}

// DeciderFunc adapts a function to Decider.
type DeciderFunc func(ctx context.Context, req Request) (Decision, error)

// Decide calls f.
func (f DeciderFunc) Decide(ctx context.Context, req Request) (Decision, error) { return f(ctx, req) }

// Yolo approves everything.
type Yolo struct{}

// Decide approves.
func (Yolo) Decide(context.Context, Request) (Decision, error) { return Decision{Approved: true}, nil }

// Deny rejects everything, with Feedback (which may be empty).
type Deny struct{ Feedback string }

// Decide rejects.
func (d Deny) Decide(context.Context, Request) (Decision, error) {
	return Decision{Feedback: d.Feedback}, nil
}

// UnattendedFeedback is the rejection feedback of runs that cannot ask a user.
const UnattendedFeedback = "This run cannot ask the user for approval (non-interactive); the user can allow such actions by running with --yolo."

// Answer is a user's answer to an approval prompt.
type Answer int

// The answers a user can give.
const (
	Approve Answer = iota
	ApproveForSession
	Reject
)

// Asker asks the user. Feedback is only read with Reject.
type Asker func(ctx context.Context, req Request) (answer Answer, feedback string, err error)

// Session asks the user through an Asker, remembering the actions approved
// for the session (keyed by Request.SessionKey) so they are not asked
// again. Requests are asked one at a time.
type Session struct {
	ask Asker

	mu       sync.Mutex
	approved map[string]bool
	askMu    sync.Mutex
}

// NewSession returns a Session decider.
func NewSession(ask Asker) *Session {
	return &Session{ask: ask, approved: map[string]bool{}}
}

type forceAskKey struct{}

// WithForceAsk marks a request that must be asked even when its action was
// approved for the session (an ask permission rule, a PreToolUse hook
// answering "ask").
func WithForceAsk(ctx context.Context) context.Context {
	return context.WithValue(ctx, forceAskKey{}, true)
}

// ForceAsk reports whether ctx carries WithForceAsk.
func ForceAsk(ctx context.Context) bool { v, _ := ctx.Value(forceAskKey{}).(bool); return v }

// Decide approves actions approved for the session, else asks.
func (s *Session) Decide(ctx context.Context, req Request) (Decision, error) {
	if ForceAsk(ctx) {
		s.askMu.Lock()
		defer s.askMu.Unlock()
		answer, feedback, err := s.ask(ctx, req)
		if err != nil {
			return Decision{}, err
		}
		if answer == Reject {
			return Decision{Feedback: feedback}, nil
		}
		return Decision{Approved: true}, nil
	}
	if s.isApproved(req.SessionKey()) {
		return Decision{Approved: true}, nil
	}
	s.askMu.Lock()
	defer s.askMu.Unlock()
	// Another call may have been approved for the session while we waited.
	if s.isApproved(req.SessionKey()) {
		return Decision{Approved: true}, nil
	}
	answer, feedback, err := s.ask(ctx, req)
	if err != nil {
		return Decision{}, err
	}
	switch answer {
	case Approve:
		return Decision{Approved: true}, nil
	case ApproveForSession:
		s.mu.Lock()
		s.approved[req.SessionKey()] = true
		s.mu.Unlock()
		return Decision{Approved: true}, nil
	default:
		return Decision{Feedback: feedback}, nil
	}
}

func (s *Session) isApproved(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.approved[key]
}
