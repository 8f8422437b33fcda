package temporalengine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// Cursor is a position in a turn's feed: the id of the feed history's
// event that carried a batch, and the index of the event in that batch.
// The zero Cursor is the feed's start. Follow from a cursor delivers the
// events after it: a client that keeps the cursor of the last event it
// handled resumes, after a reconnect, with no gap and no duplicate.
type Cursor struct {
	Event int64
	Index int
}

// String is the cursor as EVENT.INDEX (for an SSE event id, say).
func (c Cursor) String() string { return fmt.Sprintf("%d.%d", c.Event, c.Index) }

// ParseCursor reads a cursor written by Cursor.String.
func ParseCursor(s string) (Cursor, error) {
	e, i, ok := strings.Cut(s, ".")
	ev, err1 := strconv.ParseInt(e, 10, 64)
	idx, err2 := strconv.Atoi(i)
	if !ok || err1 != nil || err2 != nil || ev < 0 || idx < 0 {
		return Cursor{}, fmt.Errorf("invalid feed cursor %q: want EVENT.INDEX", s)
	}
	return Cursor{Event: ev, Index: idx}, nil
}

// after: c is past from.
func (c Cursor) after(from Cursor) bool {
	return c.Event > from.Event || c.Event == from.Event && c.Index > from.Index
}

// feedWait bounds the wait between two looks for a feed that does not
// exist yet (no event of its turn was published).
const feedWait = time.Second

// Follow reads the feed of the session's turn from the cursor from,
// calling fn with each event and its cursor, in order, as they are
// published (a long poll of the feed workflow's history: no worker is
// involved). It returns nil after the turn's end (a FeedEnd event) or
// once the feed ended without one (its idle timer); fn's error, which
// stops it; or ctx's. A feed that does not exist yet (its turn has not
// published anything, or has not started) is waited for; one past the
// namespace's retention is too, so bound ctx.
func (s *Session) Follow(ctx context.Context, turn int, from Cursor, fn func(Cursor, FeedEvent) error) error {
	return follow(ctx, s.c, s.dc, FeedID(s.id, turn), from, fn)
}

func follow(ctx context.Context, c client.Client, dc converter.DataConverter, id string, from Cursor, fn func(Cursor, FeedEvent) error) error {
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	wait := 20 * time.Millisecond
	for {
		it := c.GetWorkflowHistory(ctx, id, "", true, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		seen := false
		for it.HasNext() {
			ev, err := it.Next()
			var nf *serviceerror.NotFound
			if err != nil && errors.As(err, &nf) && !seen {
				break // not started yet
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("following the feed %s: %w", id, err)
			}
			seen = true
			switch ev.GetEventType() {
			case enums.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
				a := ev.GetWorkflowExecutionSignaledEventAttributes()
				cur := Cursor{Event: ev.GetEventId()}
				switch a.GetSignalName() {
				case SignalFeedEvents:
					var batch []FeedEvent
					if err := dc.FromPayloads(a.GetInput(), &batch); err != nil {
						return fmt.Errorf("the feed %s, event %d: %w", id, cur.Event, err)
					}
					for i, e := range batch {
						if cur.Index = i; cur.after(from) {
							if err := fn(cur, e); err != nil {
								return err
							}
						}
					}
				case SignalFeedEnd:
					var out TurnOutcome
					if err := dc.FromPayloads(a.GetInput(), &out); err != nil {
						return fmt.Errorf("the feed %s, event %d: %w", id, cur.Event, err)
					}
					if cur.after(from) {
						return fn(cur, FeedEvent{Kind: FeedEnd, Outcome: &out})
					}
					return nil
				}
			case enums.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enums.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
				enums.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enums.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
				enums.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, enums.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				return nil
			}
		}
		if seen {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, feedWait)
	}
}

// feedGrace bounds the wait, once a turn has ended, for its feed's last
// events (they are in the feed by then; only a worker that publishes
// nothing leaves a feed that never comes).
const feedGrace = 10 * time.Second

// TurnFeed runs a turn as Turn does and calls fn with the turn's feed
// events as they are published, the last being FeedEnd (unless the feed
// could not be read: the turn's result is what counts). fn is called from
// one goroutine, in order, and never after TurnFeed returns; the turn
// waits for nothing fn does, but a slow fn delays the events after it.
func (s *Session) TurnFeed(ctx context.Context, input string, fn func(Cursor, FeedEvent)) (loop.TurnResult, error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	updateID := "turn-" + hex.EncodeToString(b)
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: s.WorkflowID(), UpdateID: updateID,
		UpdateName: UpdateTurn, Args: []any{input}, WaitForStage: client.WorkflowUpdateStageAccepted})
	if err != nil {
		return s.turnResult(ctx, TurnOutcome{}, err)
	}
	fctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	done := make(chan struct{})
	turn := s.turnOf(ctx, updateID)
	each := func(c Cursor, e FeedEvent) error { fn(c, e); return nil }
	if turn > 0 {
		go func() { defer close(done); _ = s.Follow(fctx, turn, Cursor{}, each) }()
	}
	var out TurnOutcome
	err = h.Get(ctx, &out)
	if turn == 0 && err == nil && out.Turn > 0 {
		// The turn was over before its number could be asked: its feed
		// is complete, read it whole.
		turn = out.Turn
		go func() { defer close(done); _ = s.Follow(fctx, turn, Cursor{}, each) }()
	}
	if turn > 0 {
		if err != nil {
			stop() // interrupted: the feed is not waited for
		}
		select {
		case <-done:
		case <-time.After(feedGrace):
			stop()
			<-done
		}
	}
	return s.turnResult(ctx, out, err)
}

// turnOf is the number of the turn started by the update updateID (0
// when the session runs another turn by now).
func (s *Session) turnOf(ctx context.Context, updateID string) int {
	v, err := s.c.QueryWorkflow(ctx, s.WorkflowID(), "", QueryTurn)
	var info TurnInfo
	if err != nil || v.Get(&info) != nil || info.UpdateID != updateID {
		return 0
	}
	return info.Turn
}

// turnResult is Turn's result of an outcome.
func (s *Session) turnResult(ctx context.Context, out TurnOutcome, err error) (loop.TurnResult, error) {
	if err != nil {
		if ctx.Err() != nil {
			s.interrupted.Store(true)
			return loop.TurnResult{Reason: loop.StopCancelled}, ctx.Err()
		}
		return loop.TurnResult{}, fmt.Errorf("session %s: %w", s.id, err)
	}
	res := loop.TurnResult{Steps: out.Steps, Usage: out.Usage, Reason: out.Reason, ModelStop: out.ModelStop}
	if out.Error != "" {
		return res, errors.New(out.Error)
	}
	return res, nil
}

// TurnObserved runs a turn as Turn does and shows observe the turn's
// events as host/loop's, as the in-process loop's observer sees them
// (LoopEvents), ending with loop.TurnEnded. observe is called from one
// goroutine, in order, and never after TurnObserved returns.
func (s *Session) TurnObserved(ctx context.Context, input string, observe func(loop.Event)) (loop.TurnResult, error) {
	ended := false
	res, err := s.TurnFeed(ctx, input, func(_ Cursor, e FeedEvent) {
		for _, le := range LoopEvents(e) {
			observe(le)
		}
		ended = ended || e.Kind == FeedEnd
	})
	if !ended {
		if err != nil && res.Reason != loop.StopCancelled {
			observe(loop.TurnFailed{Err: err})
		}
		observe(loop.TurnEnded{Steps: res.Steps, Usage: res.Usage, Reason: res.Reason, ModelStop: res.ModelStop, Err: err})
	}
	return res, err
}

// LoopEvents are the host/loop events of a feed event, for the front
// ends that render the loop's (nil for none: FeedApproval, whose answer is
// Session.Answer's, and FeedDropped). A tool result's output is cut to
// FeedOutputBytes; its duration is the call's on the worker.
func LoopEvents(e FeedEvent) []loop.Event {
	switch e.Kind {
	case FeedStep:
		return []loop.Event{loop.StepStarted{Step: e.Step, Attempt: max(e.Attempt, 1)}}
	case FeedText:
		return []loop.Event{loop.TextDelta{Step: e.Step, Text: e.Text}}
	case FeedReasoning:
		return []loop.Event{loop.ReasoningDelta{Step: e.Step, Text: e.Text}}
	case FeedToolCall:
		if e.Call != nil {
			return []loop.Event{loop.ToolCallStarted{Step: e.Step, Call: *e.Call}}
		}
	case FeedToolResult:
		if e.Call != nil && e.Result != nil {
			r := e.Result
			res := toolset.Result{ToolCallID: e.Call.ID, Kind: r.Kind, Brief: r.Brief, Message: r.Message, Feedback: r.Feedback}
			if r.Output != "" {
				res.Output = []providers.ContentPart{providers.TextPart(r.Output)}
			}
			return []loop.Event{loop.ToolCallFinished{Step: e.Step, Call: *e.Call, Result: res, Duration: r.Duration}}
		}
	case FeedUsage:
		if e.Usage != nil {
			return []loop.Event{loop.UsageReported{Step: e.Step, Usage: *e.Usage}}
		}
	case FeedStop:
		return []loop.Event{loop.ResponseStopped{Step: e.Step, Reason: e.Stop, Truncated: e.Truncated}}
	case FeedRetry:
		return []loop.Event{loop.StepRetried{Step: e.Step, Attempt: e.Attempt + 1, Err: errors.New(e.Error)}}
	case FeedEnd:
		if o := e.Outcome; o != nil {
			var err error
			var evs []loop.Event
			if o.Error != "" {
				err = errors.New(o.Error)
				evs = append(evs, loop.TurnFailed{Err: err})
			}
			return append(evs, loop.TurnEnded{Steps: o.Steps, Usage: o.Usage, Reason: o.Reason, ModelStop: o.ModelStop, Err: err})
		}
	}
	return nil
}
