package temporalengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// Opener opens a session's conversation on a worker (conversation.Open
// with the worker's agent, provider and keys); ask is its approval asker
// unless req says Yolo or Unattended.
type Opener func(ctx context.Context, req OpenRequest, ask approval.Asker) (Hosted, error)

// Hosted is what a worker needs of a session's conversation
// (*conversation.Conversation): its model, prompt and tools.
type Hosted interface {
	Provider() providers.ChatProvider
	System() string
	Toolset() *toolset.Toolset
	Close()
}

var _ Hosted = (*conversation.Conversation)(nil)

// Activities are the session's activities on one worker: its
// conversations (and their plugin processes), one per worker session.
type Activities struct {
	open Opener
	// claims holds the tool messages too large for the workflow history.
	claims claims
	// pub publishes the turns' live events (nil: none; feed.go).
	pub *publisher

	mu     sync.Mutex
	convs  map[string]Hosted
	askers map[string]*asker
	qs     map[string]*questioner
	closed bool
}

// NewActivities returns the activities of a worker that opens
// conversations with open.
func NewActivities(open Opener) *Activities {
	return &Activities{open: open, convs: map[string]Hosted{}, askers: map[string]*asker{}, qs: map[string]*questioner{}}
}

// StoreClaims stores the tool messages whose JSON encoding is over over
// bytes (0: DefaultClaimOver) in dir, as claim checks: the workflow
// history carries a reference, the model request reads them back. A
// session that moves to another worker needs dir there too (a shared
// volume). Call it before the worker starts.
func (a *Activities) StoreClaims(dir string, over int) { a.claims = claims{dir: dir, over: over} }

// conversation is the worker session's conversation, opened on first use.
func (a *Activities) conversation(ctx context.Context, session string, req OpenRequest) (Hosted, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, errors.New("the worker is stopping")
	}
	if c, ok := a.convs[session]; ok {
		return c, nil
	}
	ask, q := newAsker(), newQuestioner()
	if !req.Unattended {
		req.Questions = q
	}
	c, err := a.open(ctx, req, ask.Ask)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("opening the session on the worker: %v", err), "OpenError", nil)
	}
	a.convs[session], a.askers[session], a.qs[session] = c, ask, q
	return c, nil
}

// Close stops every conversation's plugins (the worker stops).
func (a *Activities) Close() {
	a.mu.Lock()
	convs := a.convs
	a.convs, a.closed = map[string]Hosted{}, true
	a.mu.Unlock()
	for _, c := range convs {
		c.Close()
	}
}

// CloseSession stops the worker session's conversation.
func (a *Activities) CloseSession(ctx context.Context, session string) error {
	a.mu.Lock()
	c := a.convs[session]
	delete(a.convs, session)
	delete(a.askers, session)
	delete(a.qs, session)
	a.mu.Unlock()
	if c != nil {
		c.Close()
	}
	return nil
}

// beat heartbeats every third of the heartbeat timeout until stop: a host
// timer, so that a long call that reports no progress is not taken for
// a dead worker, and a cancellation reaches it.
func beat(ctx context.Context) (stop func()) {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// ModelRequest streams one model response with the worker's provider and
// returns its final message.
func (a *Activities) ModelRequest(ctx context.Context, in ModelInput) (ModelOutput, error) {
	conv, err := a.conversation(ctx, in.Session, in.Open)
	if err != nil {
		return ModelOutput{}, err
	}
	stop := beat(ctx)
	defer stop()
	conv.Toolset().SetPlanMode(in.PlanMode)
	history, err := a.claims.resolve(claimSession(ctx), in.History)
	if err != nil {
		return ModelOutput{}, err
	}
	fw := a.feed(ctx, in.Turn)
	defer fw.close()
	fw.add(FeedEvent{Kind: FeedStep, Step: in.Step, Attempt: int(activity.GetInfo(ctx).Attempt)})
	out, err := stream(ctx, conv.Provider(), providers.Request{System: conv.System(), History: history, Tools: conv.Toolset().Tools()},
		func(ev providers.Event) { fw.event(in.Step, ev) })
	if err != nil && ctx.Err() == nil && providers.IsRetryable(err) {
		fw.add(FeedEvent{Kind: FeedRetry, Step: in.Step, Attempt: int(activity.GetInfo(ctx).Attempt), Error: err.Error()})
	}
	if err != nil {
		if ctx.Err() != nil {
			return ModelOutput{}, ctx.Err()
		}
		if providers.IsRetryable(err) {
			return ModelOutput{}, temporal.NewApplicationError(err.Error(), "RetryableProviderError")
		}
		return ModelOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrorProvider, nil)
	}
	for _, c := range out.Message.ToolCalls {
		if t, ok := conv.Toolset().Find(c.Name); ok && repeatable(toolset.AnnotationsOf(t)) && !slices.Contains(out.Repeatable, c.Name) {
			out.Repeatable = append(out.Repeatable, c.Name)
		}
	}
	return out, nil
}

// repeatable: a call of the tool may run again.
func repeatable(a toolset.Annotations) bool {
	return a.IsReadOnly() || (a.Idempotent != nil && *a.Idempotent)
}

// stream reads one response to its end, showing each event to seen.
func stream(ctx context.Context, p providers.ChatProvider, req providers.Request, seen func(providers.Event)) (ModelOutput, error) {
	st, err := p.Stream(ctx, req)
	if err != nil {
		return ModelOutput{}, err
	}
	defer st.Close()
	var out ModelOutput
	var text, reasoning []byte
	for {
		ev, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return ModelOutput{}, err
		}
		activity.RecordHeartbeat(ctx)
		seen(ev)
		switch ev.Kind {
		case providers.EventText:
			text = append(text, ev.Text...)
		case providers.EventReasoning:
			reasoning = append(reasoning, ev.Text...)
		case providers.EventToolCall:
			out.Message.ToolCalls = append(out.Message.ToolCalls, *ev.ToolCall)
		case providers.EventUsage:
			out.Usage = addUsage(out.Usage, *ev.Usage)
		case providers.EventStop:
			out.Stop = ev.Stop
		}
	}
	out.Message.Role = providers.RoleAssistant
	out.Message.Reasoning = string(reasoning)
	if len(text) > 0 {
		out.Message.Content = []providers.ContentPart{providers.TextPart(string(text))}
	}
	if ss, ok := st.(providers.SignedStream); ok {
		out.Message.ReasoningSignature = ss.ReasoningSignature()
	}
	return out, nil
}

// ToolCall runs one tool call on the worker session's conversation,
// heartbeating on a host timer and on each progress report of the tool.
func (a *Activities) ToolCall(ctx context.Context, in ToolInput) (ToolOutput, error) {
	conv, err := a.conversation(ctx, in.Session, in.Open)
	if err != nil {
		return ToolOutput{}, err
	}
	stop := beat(ctx)
	defer stop()
	a.mu.Lock()
	ask, q := a.askers[in.Session], a.qs[in.Session]
	a.mu.Unlock()
	ask.begin(in.Call.ID, in.Decided, in.ForSession)
	q.begin(in.Call.ID, in.Answered)
	ts := conv.Toolset()
	ts.SetPlanMode(in.PlanMode)
	cctx := toolset.WithProgress(ctx, func(p toolset.Progress) { activity.RecordHeartbeat(ctx, p.Progress) })
	start := time.Now()
	r := ts.Handle(cctx, in.Call).Result()
	asked, questions := ask.end(in.Call.ID), q.end(in.Call.ID)
	if ctx.Err() != nil {
		return ToolOutput{}, ctx.Err()
	}
	if questions == nil {
		// A call stopped at questions has no result yet: its run with
		// the answers publishes it.
		a.publishTool(ctx, in, r, asked, time.Since(start))
	}
	if asked != nil {
		return ToolOutput{Asks: asked}, nil
	}
	if questions != nil {
		return ToolOutput{Questions: questions}, nil
	}
	msg, err := a.claims.store(claimSession(ctx), r.ToolMessage())
	if err != nil {
		return ToolOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("tool call %s: %v", in.Call.ID, err), ErrorClaimCheck, nil)
	}
	return ToolOutput{Message: msg, Rejected: r.Kind == toolset.Rejected && r.Feedback == ""}, nil
}
