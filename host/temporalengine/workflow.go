package temporalengine

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// maxWorkerLosses bounds the worker sessions one request or call may use
// before the turn fails.
const maxWorkerLosses = 3

// ErrorProvider is the type of the application error a model request
// fails with for good (the provider said it is not worth retrying).
const ErrorProvider = "ProviderError"

// session is the workflow's state: deterministic, rebuilt by replay.
type session struct {
	in       SessionInput
	history  []providers.Message
	planMode bool
	turns    int
	steps    int
	runs     int
	busy     bool
	closed   bool
	// update is the id of the update that started the last turn.
	update string
	// last is the outcome of the last turn that ended (QueryStatus).
	last *TurnOutcome

	// sctx is the open worker session's context (nil before the first).
	sctx workflow.Context
	appr approvals
	qs   questions
	// lost marks sctx's worker as gone, seen by a timed out activity
	// before the session's own heartbeat says so.
	lost bool
	// cancelTurn cancels the running turn (nil when none runs).
	cancelTurn workflow.CancelFunc
	// uctx is the running turn's update context, which a cancel does not
	// end: the worker session is made in it and outlives a cancelled
	// turn. link is sctx as the running turn (linkTurn) uses it:
	// cancelled with the turn.
	uctx, link, linkOf, linkTurn workflow.Context
	// note is told the model before its next request: the session went
	// on on another worker, or in a new run.
	note string
}

// Workflow is the session workflow: it runs the turns sent as UpdateTurn,
// one at a time, until SignalClose.
func Workflow(ctx workflow.Context, in SessionInput) (SessionResult, error) {
	if in.MaxStepsPerTurn <= 0 {
		in.MaxStepsPerTurn = loop.DefaultMaxStepsPerTurn
	}
	if in.Heartbeat <= 0 {
		in.Heartbeat = DefaultHeartbeat
	}
	if in.Retry.Attempts <= 0 {
		in.Retry = providers.DefaultRetryPolicy
	}
	if in.ContinueAfter <= 0 {
		in.ContinueAfter = DefaultContinueAfter
	}
	s := &session{in: in, history: slices.Clone(in.History), planMode: in.PlanMode}
	turnDone := workflow.NewBufferedChannel(ctx, 1)
	if err := workflow.SetQueryHandler(ctx, QueryHistory, func() ([]providers.Message, error) {
		return s.history, nil
	}); err != nil {
		return SessionResult{}, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateTurn, func(ctx workflow.Context, input string) (TurnOutcome, error) {
		s.busy = true
		defer func() { s.busy = false; turnDone.SendAsync(nil) }()
		s.turns++
		s.update = workflow.GetCurrentUpdateInfo(ctx).ID
		tctx, cancel := workflow.WithCancel(ctx)
		s.uctx, s.cancelTurn = ctx, cancel
		out := s.turn(tctx, input)
		s.cancelTurn = nil
		cancel()
		out.Turn = s.turns
		s.last = &out
		s.endFeed(ctx, out)
		return out, nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, input string) error {
		switch {
		case s.closed:
			return errors.New("the session is closed")
		case s.busy:
			return errors.New("An agent turn is already in progress")
		}
		return nil
	}}); err != nil {
		return SessionResult{}, err
	}
	if err := s.setApprovalHandlers(ctx); err != nil {
		return SessionResult{}, err
	}
	if err := s.setQuestionHandlers(ctx); err != nil {
		return SessionResult{}, err
	}
	if err := s.setFeedHandlers(ctx); err != nil {
		return SessionResult{}, err
	}
	if err := s.setStatusHandler(ctx); err != nil {
		return SessionResult{}, err
	}
	if c := in.Carried; c != nil {
		s.turns, s.steps, s.runs, s.appr.forSession, s.note = c.Turns, c.Steps, c.Runs, slices.Clone(c.ForSession), ContinuedNote
	}
	closeCh := workflow.GetSignalChannel(ctx, SignalClose)
	planCh := workflow.GetSignalChannel(ctx, SignalPlanMode)
	cancelCh := workflow.GetSignalChannel(ctx, SignalCancelTurn)
	for !s.closed {
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(closeCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); s.closed = true })
		sel.AddReceive(planCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &s.planMode) })
		sel.AddReceive(cancelCh, func(c workflow.ReceiveChannel, _ bool) {
			c.Receive(ctx, nil)
			if s.cancelTurn != nil {
				s.cancelTurn()
			}
		})
		ended := false
		sel.AddReceive(turnDone, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); ended = true })
		sel.Select(ctx)
		// The history grows by turns: past a turn it may be too long.
		if ended && !s.closed && !s.busy && s.tooLong(ctx) {
			return s.continueAsNew(ctx, closeCh, planCh)
		}
	}
	if err := workflow.Await(ctx, func() bool { return !s.busy && workflow.AllHandlersFinished(ctx) }); err != nil {
		return SessionResult{}, err
	}
	s.dropClaims(ctx)
	s.closeWorker(ctx)
	return SessionResult{History: s.history, Turns: s.turns, Steps: s.steps}, nil
}

// closeWorker stops the worker session's conversation (its plugins).
func (s *session) closeWorker(ctx workflow.Context) {
	if s.sctx != nil && workflow.GetSessionInfo(s.sctx).SessionState == workflow.SessionStateOpen {
		actx := workflow.WithActivityOptions(s.sctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		_ = workflow.ExecuteActivity(actx, ActivityClose, workflow.GetSessionInfo(s.sctx).SessionID).Get(ctx, nil)
		// The session itself ends with the workflow: its worker frees
		// the slot at its next session heartbeat.
	}
}

// tooLong: the workflow's history nears Temporal's limits.
func (s *session) tooLong(ctx workflow.Context) bool {
	info := workflow.GetInfo(ctx)
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= s.in.ContinueAfter
}

// continueAsNew ends the run, once no turn runs, for a new one that
// carries the session's state: history, counters, plan mode, the actions
// approved for the session (and the signals not yet received).
func (s *session) continueAsNew(ctx workflow.Context, closeCh, planCh workflow.ReceiveChannel) (SessionResult, error) {
	if err := workflow.Await(ctx, func() bool { return !s.busy && workflow.AllHandlersFinished(ctx) }); err != nil {
		return SessionResult{}, err
	}
	for planCh.ReceiveAsync(&s.planMode) {
	}
	s.closeWorker(ctx)
	// A close signal sent meanwhile ends the session here instead.
	if closeCh.ReceiveAsync(nil) {
		s.dropClaims(ctx)
		return SessionResult{History: s.history, Turns: s.turns, Steps: s.steps}, nil
	}
	in := s.in
	in.History, in.PlanMode = s.history, s.planMode
	in.Carried = &Carried{Turns: s.turns, Steps: s.steps, ForSession: slices.Clone(s.appr.forSession), Runs: s.runs + 1}
	return SessionResult{}, workflow.NewContinueAsNewError(ctx, WorkflowName, in)
}

// worker is the open worker session, a new one when there is none or the
// last one's worker stopped.
func (s *session) worker(ctx workflow.Context, out *TurnOutcome) (workflow.Context, string, error) {
	if s.sctx != nil && !s.lost && workflow.GetSessionInfo(s.sctx).SessionState == workflow.SessionStateOpen {
		return s.linked(ctx), workflow.GetSessionInfo(s.sctx).SessionID, nil
	}
	if s.sctx != nil {
		workflow.CompleteSession(s.sctx) // a no-op unless it still looks open
		s.note = MovedNote
	}
	sctx, err := workflow.CreateSession(s.uctx, &workflow.SessionOptions{
		ExecutionTimeout: 365 * 24 * time.Hour,
		CreationTimeout:  10 * time.Minute,
		HeartbeatTimeout: s.in.Heartbeat,
	})
	if err != nil {
		return nil, "", fmt.Errorf("no worker took the session: %w", err)
	}
	s.sctx, s.lost = sctx, false
	out.Workers++
	return s.linked(ctx), workflow.GetSessionInfo(sctx).SessionID, nil
}

// linked is the worker session's context for the turn whose context is
// ctx: its activities run in the worker session, and are cancelled with
// the turn (SignalCancelTurn) while the session goes on.
func (s *session) linked(ctx workflow.Context) workflow.Context {
	if s.link != nil && s.linkOf == s.sctx && s.linkTurn == ctx {
		return s.link
	}
	lctx, cancel := workflow.WithCancel(s.sctx)
	workflow.Go(ctx, func(gctx workflow.Context) {
		gctx.Done().Receive(gctx, nil)
		cancel()
	})
	s.link, s.linkOf, s.linkTurn = lctx, s.sctx, ctx
	return lctx
}

// workerLost says whether err means the worker running an activity of
// sctx stopped: its heartbeat or its session's timed out, or the session
// failed.
func workerLost(sctx workflow.Context, err error) bool {
	if errors.Is(err, workflow.ErrSessionFailed) {
		return true
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) && (te.TimeoutType() == enums.TIMEOUT_TYPE_HEARTBEAT || te.TimeoutType() == enums.TIMEOUT_TYPE_SCHEDULE_TO_START) {
		return true
	}
	var ce *temporal.CanceledError
	return errors.As(err, &ce) && workflow.GetSessionInfo(sctx).SessionState == workflow.SessionStateFailed
}

func (s *session) open() OpenRequest {
	return OpenRequest{WorkDir: s.in.WorkDir, Yolo: s.in.Yolo, Unattended: s.in.Unattended}
}

// turn runs one turn: steps until the model calls no tool, a call is
// rejected without feedback, the step limit or an error.
func (s *session) turn(ctx workflow.Context, input string) TurnOutcome {
	var out TurnOutcome
	s.history = append(s.history, providers.Message{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart(input)}})
	guard := newGuard(ctx)
	for step := 1; ; step++ {
		if step > s.in.MaxStepsPerTurn {
			out.Reason, out.Error = loop.StopError, (&loop.MaxStepsError{N: s.in.MaxStepsPerTurn}).Error()
			return out
		}
		resp, err := s.model(ctx, step, &out)
		if err != nil && ctx.Err() != nil {
			return s.interrupted(out, nil)
		}
		if err != nil {
			out.Reason, out.Error = loop.StopError, err.Error()
			return out
		}
		out.Usage = addUsage(out.Usage, resp.Usage)
		out.ModelStop = resp.Stop
		v := judge(guard, resp.Message.ToolCalls)
		msgs, rejected, err := s.calls(ctx, step, resp, v, &out)
		if ctx.Err() != nil {
			// The step's results so far, the interrupted calls saying so.
			if len(msgs) != len(resp.Message.ToolCalls) {
				msgs = make([]providers.Message, len(resp.Message.ToolCalls))
				for i, c := range resp.Message.ToolCalls {
					msgs[i] = toolText(c.ID, loop.InterruptedCall, true)
				}
			}
			out.Steps = step
			s.steps++
			return s.interrupted(out, append([]providers.Message{resp.Message}, v.apply(resp.Message.ToolCalls, msgs)...))
		}
		if err != nil {
			out.Reason, out.Error = loop.StopError, err.Error()
			return out
		}
		msgs = v.apply(resp.Message.ToolCalls, msgs)
		s.history = append(s.history, resp.Message)
		s.history = append(s.history, msgs...)
		out.Steps = step
		s.steps++
		switch {
		case v.stopped():
			out.Reason = loop.StopToolCallRepeat
			return out
		case len(resp.Message.ToolCalls) == 0:
			out.Reason = loop.StopDone
			return out
		case rejected:
			out.Reason = loop.StopRejected
			return out
		}
	}
}

// interrupted ends a turn a client cancelled (SignalCancelTurn): the
// step's messages, then the note the in-process loop leaves after Ctrl-C.
func (s *session) interrupted(out TurnOutcome, step []providers.Message) TurnOutcome {
	s.history = append(s.history, step...)
	s.history = append(s.history, providers.Message{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart(loop.InterruptedNote)}})
	out.Reason = loop.StopCancelled
	return out
}

// model runs the step's model request: retried under the provider's
// retry policy on its worker, and asked again on another worker when
// that one stops.
func (s *session) model(ctx workflow.Context, step int, out *TurnOutcome) (ModelOutput, error) {
	r := s.in.Retry
	for losses := 0; ; losses++ {
		sctx, id, err := s.worker(ctx, out)
		if err != nil {
			return ModelOutput{}, err
		}
		actx := workflow.WithActivityOptions(sctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Hour,
			HeartbeatTimeout:    s.in.Heartbeat,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: max(r.Initial, time.Millisecond), BackoffCoefficient: 2,
				MaximumInterval: max(r.Max, r.Initial, time.Millisecond), MaximumAttempts: int32(max(r.Attempts, 1)),
				NonRetryableErrorTypes: []string{ErrorProvider}},
		})
		if s.note != "" {
			s.history = append(s.history, providers.Message{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart(s.note)}})
			s.note = ""
		}
		var resp ModelOutput
		err = workflow.ExecuteActivity(actx, ActivityModel, ModelInput{Session: id, Open: s.open(), PlanMode: s.planMode, History: s.history,
			Turn: s.turns, Step: step}).Get(ctx, &resp)
		if err == nil {
			return resp, nil
		}
		if !workerLost(sctx, err) || losses+1 >= maxWorkerLosses {
			return ModelOutput{}, errors.New(activityMessage(err))
		}
		s.lost = true
	}
}

// calls runs the step's tool calls, concurrently, one activity each keyed
// by the call id, and returns their tool messages in call order.
func (s *session) calls(ctx workflow.Context, step int, resp ModelOutput, v verdicts, out *TurnOutcome) ([]providers.Message, bool, error) {
	calls := resp.Message.ToolCalls
	if len(calls) == 0 {
		return nil, false, nil
	}
	msgs := make([]providers.Message, len(calls))
	done := make([]bool, len(calls))
	rejected := false
	for i, c := range calls {
		if c.Truncated {
			msgs[i], done[i] = toolText(c.ID, "The call was cut off by the model's output limit; it was not run.", true), true
		} else if m, skip := v.skip(i, c); skip { // the repeat guard's
			msgs[i], done[i] = m, true
		}
	}
	for losses := 0; ; losses++ {
		sctx, id, err := s.worker(ctx, out)
		if err != nil {
			return nil, false, err
		}
		futures := make([]workflow.Future, len(calls))
		for i, c := range calls {
			if !done[i] {
				futures[i] = s.runTool(sctx, id, step, fmt.Sprintf("tool/%d/%s/%d", step, c.ID, losses), c, slices.Contains(resp.Repeatable, c.Name), nil, nil)
			}
		}
		again := false
		for i, c := range calls {
			if futures[i] == nil {
				continue
			}
			var res ToolOutput
			err := futures[i].Get(ctx, &res)
			var decided []Decided
			var answered []approval.Answers
			for n := 1; err == nil && (res.Asks != nil || res.Questions != nil); n++ {
				// Stopped at an approval or questions: wait for the
				// answer, then run the call again with it.
				if res.Asks != nil {
					decided, err = s.await(ctx, *res.Asks, decided)
				} else {
					answered, err = s.awaitQuestions(ctx, *res.Questions, answered)
				}
				if err == nil {
					res = ToolOutput{}
					err = s.runTool(sctx, id, step, fmt.Sprintf("tool/%d/%s/%d/%d", step, c.ID, losses, n), c,
						slices.Contains(resp.Repeatable, c.Name), decided, answered).Get(ctx, &res)
				}
			}
			switch {
			case err == nil:
				msgs[i], done[i] = res.Message, true
				rejected = rejected || res.Rejected
			case ctx.Err() != nil: // the turn was cancelled
				msgs[i], done[i] = toolText(c.ID, loop.InterruptedCall, true), true
			case workerLost(sctx, err) && slices.Contains(resp.Repeatable, c.Name) && losses+1 < maxWorkerLosses:
				s.lost, again = true, true // run again on another worker
			case workerLost(sctx, err):
				s.lost = true
				msgs[i], done[i] = toolText(c.ID, OutcomeUnknown, true), true
			default:
				msgs[i], done[i] = toolText(c.ID, "The tool call failed: "+activityMessage(err), true), true
			}
		}
		if !again {
			return msgs, rejected, nil
		}
	}
}

// runTool starts one tool call activity, keyed by the call id (with the
// step, the worker and the approval round, since models number calls per
// response): at most once unless the tool may repeat.
func (s *session) runTool(sctx workflow.Context, session string, step int, activityID string, c providers.ToolCall, repeatable bool, decided []Decided, answered []approval.Answers) workflow.Future {
	attempts := int32(1)
	if repeatable {
		attempts = 3
	}
	actx := workflow.WithActivityOptions(sctx, workflow.ActivityOptions{
		ActivityID:          activityID,
		StartToCloseTimeout: 24 * time.Hour,
		HeartbeatTimeout:    s.in.Heartbeat,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: attempts},
	})
	return workflow.ExecuteActivity(actx, ActivityTool, ToolInput{Session: session, Open: s.open(), PlanMode: s.planMode, Call: c,
		Decided: decided, ForSession: slices.Clone(s.appr.forSession), Answered: answered, Turn: s.turns, Step: step})
}

func toolText(id, text string, isErr bool) providers.Message {
	return providers.Message{Role: providers.RoleTool, ToolCallID: id, IsError: isErr,
		Content: []providers.ContentPart{providers.TextPart(text)}}
}

// activityMessage is the cause of an activity's failure, without
// Temporal's wrapping.
func activityMessage(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Error()
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		err = u
	}
	return err.Error()
}

func addUsage(a, b providers.Usage) providers.Usage {
	a.InputTokens += b.InputTokens
	a.OutputTokens += b.OutputTokens
	a.CacheReadTokens += b.CacheReadTokens
	a.CacheCreationTokens += b.CacheCreationTokens
	return a
}
