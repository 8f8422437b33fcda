package temporalengine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/providers"
)

// A turn's live events travel outside the session workflow's history, in
// the turn's feed: a small workflow (WorkflowFeed, id FeedID) that the
// model request and tool call activities signal with batches of events
// (SignalFeedEvents) and that the session workflow ends when the turn ends
// (SignalFeedEnd, with the TurnOutcome). Clients read the feed's own
// history, long-polling it: each signal event is a batch, and its event id
// with the index in the batch is the Cursor a reconnecting client resumes
// from. Only final messages enter the session workflow's history.
const (
	// WorkflowFeed is the name of the feed workflow.
	WorkflowFeed = "kosong.Feed"
	// ActivityFeedEnd is the local activity the session workflow ends a
	// turn's feed with.
	ActivityFeedEnd = "kosong.FeedEnd"
	// SignalFeedEvents carries a batch of events ([]FeedEvent).
	SignalFeedEvents = "events"
	// SignalFeedEnd ends the feed; it carries the turn's TurnOutcome.
	SignalFeedEnd = "end"
	// QueryTurn answers the session's current turn (a TurnInfo).
	QueryTurn = "turn"
	// FeedIDPrefix prefixes the feed workflow ids: kosong-feed-SESSION-TURN.
	FeedIDPrefix = "kosong-feed-"
)

// Bounds of the publishing side.
const (
	// FeedInterval is how long text and reasoning deltas wait for more
	// before they are sent; FeedBatchBytes sends a batch at once when its
	// text reaches it.
	FeedInterval   = 100 * time.Millisecond
	FeedBatchBytes = 4 << 10
	// FeedDeltaBatches is the number of batches of a turn's feed (on one
	// worker) past which text and reasoning deltas are no longer sent (a
	// FeedDropped event says so once); FeedMaxBatches the number past
	// which nothing is sent but the turn's end. A batch costs the feed's
	// history at most four events (the signal and a workflow task), so a
	// feed stays under Temporal's history warning of 10,240 events.
	FeedDeltaBatches = 2000
	FeedMaxBatches   = 2400
	// FeedOutputBytes bounds the output a tool result event carries.
	FeedOutputBytes = 16 << 10
	// DefaultFeedIdle ends a feed that received nothing for that long
	// without its turn's end (its session was terminated).
	DefaultFeedIdle = 24 * time.Hour
)

// The kinds of FeedEvent.
const (
	FeedStep       = "step"        // a model request's attempt starts: Step, Attempt
	FeedText       = "text"        // assistant text: Step, Text
	FeedReasoning  = "reasoning"   // reasoning: Step, Text
	FeedToolCall   = "tool_call"   // the model called a tool: Step, Call
	FeedToolResult = "tool_result" // a call's result: Step, Call, Result
	FeedUsage      = "usage"       // a response's usage: Step, Usage
	FeedStop       = "stop"        // why the response ended: Step, Stop, Truncated
	FeedRetry      = "retry"       // the request failed with a retryable error, retried while its attempts last: Step, Attempt (the failed one), Error
	FeedApproval   = "approval"    // a call waits for an approval (Session.Pending, Session.Answer): Step, Call, Ask
	FeedDropped    = "dropped"     // the feed reached FeedDeltaBatches: no more deltas this turn (the final messages still reach the history)
	FeedEnd        = "end"         // the turn ended: Outcome; the last event of a feed
)

// FeedEvent is one event of a turn's feed. Which fields are set depends
// on Kind (see the Feed* constants).
type FeedEvent struct {
	Kind    string
	Step    int                  `json:",omitempty"`
	Attempt int                  `json:",omitempty"`
	Text    string               `json:",omitempty"`
	Call    *providers.ToolCall  `json:",omitempty"`
	Result  *FeedResult          `json:",omitempty"`
	Usage   *providers.Usage     `json:",omitempty"`
	Stop    providers.StopReason `json:",omitempty"`
	// Truncated are the calls of the response cut off by the output limit.
	Truncated []providers.ToolCall `json:",omitempty"`
	Error     string               `json:",omitempty"`
	Ask       *approval.Request    `json:",omitempty"`
	Outcome   *TurnOutcome         `json:",omitempty"`
}

// FeedResult is a tool call's result as a feed carries it: the output cut
// to FeedOutputBytes (the whole of it is in the session's history).
type FeedResult struct {
	Kind     toolset.Kind
	Brief    string `json:",omitempty"`
	Message  string `json:",omitempty"`
	Output   string `json:",omitempty"`
	Feedback string `json:",omitempty"`
	Duration time.Duration
}

// TurnInfo is the session's current turn (QueryTurn): its number, whether
// it runs, and the id of the update that started it.
type TurnInfo struct {
	Turn     int
	Running  bool
	UpdateID string
}

// FeedInput starts a feed workflow.
type FeedInput struct {
	// Idle ends the feed after that long without a signal (0:
	// DefaultFeedIdle).
	Idle time.Duration `json:",omitempty"`
}

// FeedID is the feed workflow id of a session's turn (the session's
// workflow id or its session id).
func FeedID(session string, turn int) string {
	return FeedIDPrefix + strings.TrimPrefix(session, WorkflowIDPrefix) + "-" + strconv.Itoa(turn)
}

// FeedWorkflow is a turn's feed: it holds the batches signalled to it in
// its history, and ends on SignalFeedEnd or after in.Idle without a
// signal. It returns the number of batches.
func FeedWorkflow(ctx workflow.Context, in FeedInput) (int, error) {
	if in.Idle <= 0 {
		in.Idle = DefaultFeedIdle
	}
	events := workflow.GetSignalChannel(ctx, SignalFeedEvents)
	end := workflow.GetSignalChannel(ctx, SignalFeedEnd)
	n, ended := 0, false
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			events.Receive(ctx, nil) // the batch is read from the history by clients
			n++
		}
	})
	workflow.Go(ctx, func(ctx workflow.Context) { end.Receive(ctx, nil); ended = true })
	for !ended {
		before := n
		// One timer an idle period, not one a signal.
		ok, err := workflow.AwaitWithTimeout(ctx, in.Idle, func() bool { return ended })
		if err != nil {
			return n, err
		}
		if !ok && n == before {
			break
		}
	}
	for events.ReceiveAsync(nil) {
		n++
	}
	return n, nil
}

// setFeedHandlers answers QueryTurn.
func (s *session) setFeedHandlers(ctx workflow.Context) error {
	return workflow.SetQueryHandler(ctx, QueryTurn, func() (TurnInfo, error) {
		return TurnInfo{Turn: s.turns, Running: s.busy, UpdateID: s.update}, nil
	})
}

// feedVersion marks the workflow versions that end their turns' feeds.
const feedVersion = "feed"

// endFeed ends the turn's feed with its outcome (a local activity: one
// marker event in the session's history, no round trip to a worker).
func (s *session) endFeed(ctx workflow.Context, out TurnOutcome) {
	if workflow.GetVersion(ctx, feedVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	dctx, cancel := workflow.NewDisconnectedContext(ctx) // a cancelled turn's feed ends too
	defer cancel()
	lctx := workflow.WithLocalActivityOptions(dctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	// A feed that cannot be ended ends on its idle timer.
	_ = workflow.ExecuteLocalActivity(lctx, ActivityFeedEnd, FeedID(workflow.GetInfo(ctx).WorkflowExecution.ID, s.turns), out).Get(lctx, nil)
}

// publisher sends the feeds' batches with the worker's client.
type publisher struct {
	c     client.Client
	queue string

	mu     sync.Mutex
	counts map[string]*feedCount
}

// feedCount is what a worker sent to one feed.
type feedCount struct {
	batches int
	dropped bool
	used    time.Time
}

func newPublisher(c client.Client, queue string) *publisher {
	return &publisher{c: c, queue: queue, counts: map[string]*feedCount{}}
}

// signal signals the feed id, starting it if needed; a feed that ended
// (its turn is over) refuses it.
func (p *publisher) signal(ctx context.Context, id, name string, arg any) error {
	_, err := p.c.SignalWithStartWorkflow(ctx, id, name, arg, client.StartWorkflowOptions{
		ID: id, TaskQueue: p.queue, WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, WorkflowFeed, FeedInput{})
	return err
}

// admit is the part of batch that the feed's bounds let through (nil for
// none), counted as sent.
func (p *publisher) admit(id string, batch []FeedEvent) []FeedEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	fc := p.counts[id]
	if fc == nil {
		for k, c := range p.counts { // forget the feeds of turns long over
			if now.Sub(c.used) > time.Hour {
				delete(p.counts, k)
			}
		}
		fc = &feedCount{}
		p.counts[id] = fc
	}
	fc.used = now
	out := bound(fc, batch)
	if len(out) > 0 {
		fc.batches++
	}
	return out
}

// bound applies the feed's bounds to a batch.
func bound(fc *feedCount, batch []FeedEvent) []FeedEvent {
	switch {
	case fc.batches >= FeedMaxBatches:
		return nil
	case fc.batches < FeedDeltaBatches:
		return batch
	}
	out := make([]FeedEvent, 0, len(batch))
	for _, ev := range batch {
		if ev.Kind == FeedText || ev.Kind == FeedReasoning {
			if !fc.dropped {
				fc.dropped = true
				out = append(out, FeedEvent{Kind: FeedDropped, Step: ev.Step})
			}
			continue
		}
		out = append(out, ev)
	}
	return out
}

// feedWriter batches one activity's events to its turn's feed: deltas
// wait up to FeedInterval (or FeedBatchBytes) for more; close sends the
// rest before the activity returns, so that a turn's events are all in
// its feed before the turn ends. Publishing is best effort: a failed send
// stops the writer, never the activity. A nil writer does nothing.
type feedWriter struct {
	send     func(context.Context, []FeedEvent) error
	ctx      context.Context
	interval time.Duration
	maxBytes int

	mu      sync.Mutex
	pending []FeedEvent
	size    int
	timer   *time.Timer
	failed  bool

	// calls are the response's tool calls so far (event).
	calls []providers.ToolCall

	sendMu sync.Mutex // one send at a time, in order
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

func newFeedWriter(ctx context.Context, send func(context.Context, []FeedEvent) error, interval time.Duration, maxBytes int) *feedWriter {
	w := &feedWriter{send: send, ctx: ctx, interval: interval, maxBytes: maxBytes,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w
}

// feed is the writer of the running activity's turn's feed (nil when the
// worker does not publish).
func (a *Activities) feed(ctx context.Context, turn int) *feedWriter {
	if a.pub == nil || turn <= 0 {
		return nil
	}
	id := FeedID(activity.GetInfo(ctx).WorkflowExecution.ID, turn)
	return newFeedWriter(ctx, func(ctx context.Context, batch []FeedEvent) error {
		if batch = a.pub.admit(id, batch); len(batch) == 0 {
			return nil
		}
		return a.pub.signal(ctx, id, SignalFeedEvents, batch)
	}, FeedInterval, FeedBatchBytes)
}

func (w *feedWriter) loop() {
	defer close(w.done)
	for {
		select {
		case <-w.kick:
			w.flush()
		case <-w.stop:
			return
		}
	}
}

// add queues an event; a text or reasoning delta joins the one before it
// when it is of the same kind and step.
func (w *feedWriter) add(ev FeedEvent) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed {
		return
	}
	if n := len(w.pending); n > 0 && (ev.Kind == FeedText || ev.Kind == FeedReasoning) &&
		w.pending[n-1].Kind == ev.Kind && w.pending[n-1].Step == ev.Step {
		w.pending[n-1].Text += ev.Text
	} else {
		w.pending = append(w.pending, ev)
	}
	w.size += len(ev.Text)
	switch {
	case w.size >= w.maxBytes:
		w.wake()
	case w.timer == nil:
		w.timer = time.AfterFunc(w.interval, w.wake)
	}
}

func (w *feedWriter) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// flush sends what is queued.
func (w *feedWriter) flush() {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	w.mu.Lock()
	batch := w.pending
	w.pending, w.size = nil, 0
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	failed := w.failed
	w.mu.Unlock()
	if len(batch) == 0 || failed {
		return
	}
	if err := w.send(w.ctx, batch); err != nil {
		w.mu.Lock()
		w.failed = true
		w.mu.Unlock()
		if l := activityLogger(w.ctx); l != nil {
			l.Warn("the turn's feed refused an event; no more are sent by this activity", "error", err)
		}
	}
}

// close sends what is queued and stops the writer.
func (w *feedWriter) close() {
	if w == nil {
		return
	}
	close(w.stop)
	<-w.done
	w.flush()
}

// activityLogger is the activity's logger (nil outside an activity: unit
// tests).
func activityLogger(ctx context.Context) (l interface{ Warn(string, ...any) }) {
	defer func() {
		if recover() != nil {
			l = nil
		}
	}()
	return activity.GetLogger(ctx)
}

// event queues a provider's stream event of step (called from the
// goroutine reading the stream).
func (w *feedWriter) event(step int, ev providers.Event) {
	if w == nil {
		return
	}
	switch ev.Kind {
	case providers.EventText:
		w.add(FeedEvent{Kind: FeedText, Step: step, Text: ev.Text})
	case providers.EventReasoning:
		w.add(FeedEvent{Kind: FeedReasoning, Step: step, Text: ev.Text})
	case providers.EventToolCall:
		c := *ev.ToolCall
		w.add(FeedEvent{Kind: FeedToolCall, Step: step, Call: &c})
		w.calls = append(w.calls, c)
	case providers.EventUsage:
		if ev.Usage != nil {
			u := *ev.Usage
			w.add(FeedEvent{Kind: FeedUsage, Step: step, Usage: &u})
		}
	case providers.EventStop:
		var cut []providers.ToolCall
		for _, c := range w.calls {
			if c.Truncated {
				cut = append(cut, c)
			}
		}
		w.add(FeedEvent{Kind: FeedStop, Step: step, Stop: ev.Stop, Truncated: cut})
	}
}

// publishTool sends a tool call's result, or the approval it waits for,
// to the turn's feed.
func (a *Activities) publishTool(ctx context.Context, in ToolInput, r toolset.Result, asked *approval.Request, took time.Duration) {
	w := a.feed(ctx, in.Turn)
	if w == nil {
		return
	}
	c := in.Call
	if asked != nil {
		w.add(FeedEvent{Kind: FeedApproval, Step: in.Step, Call: &c, Ask: asked})
	} else {
		out, _, _ := limits.Truncate(r.OutputText(), FeedOutputBytes, FeedOutputBytes, false)
		w.add(FeedEvent{Kind: FeedToolResult, Step: in.Step, Call: &c, Result: &FeedResult{Kind: r.Kind, Brief: r.Brief,
			Message: r.Message, Output: out, Feedback: r.Feedback, Duration: took}})
	}
	w.close()
}

// EndFeed is the local activity that ends a turn's feed with its outcome
// (starting it if nothing was published). A feed that already ended is
// left as it is.
func (a *Activities) EndFeed(ctx context.Context, id string, out TurnOutcome) error {
	if a.pub == nil {
		return nil
	}
	err := a.pub.signal(ctx, id, SignalFeedEnd, out)
	if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ending the feed %s: %w", id, err)
	}
	return nil
}
