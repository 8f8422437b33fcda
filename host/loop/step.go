package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// call is one tool call of a step.
type call struct {
	tc     providers.ToolCall
	key    string
	repeat int
	// reminder is the repeat guard's text appended to the call's tool
	// message ("" for none).
	reminder string
	start    time.Time
	end      time.Time
	// orig is the identical earlier call of the step this one shares a
	// result with; dups are the calls sharing this one's result.
	orig *call
	dups []*call
	// dispatched: the call was handed to its tool (truncated calls and
	// calls stopped by the repeat guard never are).
	dispatched bool
	done       bool
	// cancelled: the call's result came in after its step was cancelled
	// (or never came); its result says so.
	cancelled bool
	result    toolset.Result
}

// stepOutput is what a step produced: the whole response of a completed
// step, or what a failed or interrupted attempt got so far.
type stepOutput struct {
	text      string
	reasoning string
	// signature is the provider's opaque reasoning signature, sent back.
	signature string
	// contextTokens is the size of the context after this step's response
	// (its input and output tokens), 0 when the provider reported none.
	contextTokens int64
	calls         []*call
	// repeats counts, per call key, the consecutive steps ending with
	// this one that made the call.
	repeats map[string]int
	// stopReason is why the model stopped, as the provider reported it.
	stopReason providers.StopReason
	// repeatStop is set when the repeat guard stops the turn after this
	// step is appended.
	repeatStop bool
}

// messages are the assistant message and one tool message per call, in
// call order.
func (o *stepOutput) messages() []providers.Message {
	msg := providers.Message{Role: providers.RoleAssistant, Reasoning: o.reasoning, ReasoningSignature: o.signature}
	if o.text != "" {
		msg.Content = []providers.ContentPart{providers.TextPart(o.text)}
	}
	msgs := make([]providers.Message, 1, len(o.calls)+1)
	for _, c := range o.calls {
		msg.ToolCalls = append(msg.ToolCalls, c.tc)
		tm := c.result.ToolMessage()
		if c.reminder != "" {
			tm.Content = append(tm.Content, providers.TextPart(c.reminder))
		}
		msgs = append(msgs, tm)
	}
	msgs[0] = msg
	return msgs
}

// empty reports whether the output has nothing worth keeping: no text and
// no call (reasoning alone would make an assistant message some providers
// refuse).
func (o *stepOutput) empty() bool {
	return o == nil || (o.text == "" && len(o.calls) == 0)
}

// plainRejection reports whether a call was rejected without feedback.
func (o *stepOutput) plainRejection() bool {
	for _, c := range o.calls {
		if c.result.Kind == toolset.Rejected && c.result.Feedback == "" {
			return true
		}
	}
	return false
}

// toolCalls lists the calls, as the model made them.
func (o *stepOutput) toolCalls() []providers.ToolCall {
	out := make([]providers.ToolCall, len(o.calls))
	for i, c := range o.calls {
		out[i] = c.tc
	}
	return out
}

type streamItem struct {
	ev  providers.Event
	err error
}

// failMode says what happens to the running tool calls of an attempt that
// fails.
type failMode int

const (
	// failNone: the attempt did not fail.
	failNone failMode = iota
	// failStream: the stream broke with a retryable error. The calls that
	// arrived complete before it run to their end: their effects are real
	// and their results go into the history before the step is retried.
	failStream
	// failCancel: the turn was interrupted, or the provider failed for good.
	// Running calls are cancelled (awaited up to CancelGrace) and get a
	// result saying so.
	failCancel
)

// step runs one attempt at a step. It always returns what the attempt
// produced (calls with their results, finished or cancelled, and the text
// so far), with the error that ended it, if any; the caller decides what
// enters the history.
func (l *Loop) step(ctx context.Context, n int, prevRepeats map[string]int, usage *providers.Usage) (*stepOutput, error) {
	// sctx bounds every tool call of this attempt, streamCtx the stream.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	streamCtx, cancelStream := context.WithCancel(sctx)
	defer cancelStream()

	s := &stepState{l: l, n: n, ctx: sctx, prev: prevRepeats, byKey: map[string]*call{},
		finished: make(chan *call), quit: make(chan struct{}), parts: newPartBuffer(n),
		out: &stepOutput{repeats: map[string]int{}}}
	defer close(s.quit)

	stream, err := l.cfg.Provider.Stream(streamCtx, providers.Request{
		System: l.cfg.System, History: l.snapshot(), Tools: l.cfg.Toolset.Tools(),
	})
	if err != nil {
		return s.out, err
	}
	items := make(chan streamItem)
	go func() {
		defer stream.Close()
		for {
			ev, err := stream.Next()
			select {
			case items <- streamItem{ev, err}:
			case <-streamCtx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	var text, reasoning strings.Builder
	streaming := true
	var fail error
	mode := failNone
	for mode != failCancel && (streaming || s.outstanding > 0) {
		select {
		case it := <-items:
			switch {
			case errors.Is(it.err, io.EOF):
				streaming = false
				if ss, ok := stream.(providers.SignedStream); ok {
					s.out.signature = ss.ReasoningSignature()
				}
			case it.err != nil:
				streaming, fail = false, it.err
				cancelStream()
				mode = failCancel
				if providers.IsRetryable(it.err) && ctx.Err() == nil {
					mode = failStream
				}
			default:
				s.event(it.ev, &text, &reasoning, usage)
			}
		case c := <-s.finished:
			s.outstanding--
			if ctx.Err() != nil {
				// The result may be the call's answer to the cancellation.
				fail, mode = ctx.Err(), failCancel
				s.interrupted, s.cause, s.cancelled = true, fail, true
			}
			s.finish(c)
		case <-ctx.Done():
			fail, mode = ctx.Err(), failCancel
		}
	}
	// A context that ended while the last results came in still counts as
	// an interruption: the turn stops.
	if fail == nil && ctx.Err() != nil {
		fail, mode = ctx.Err(), failCancel
	}
	out := s.out
	out.text, out.reasoning = text.String(), reasoning.String()
	if mode == failCancel {
		s.interrupted, s.cause = ctx.Err() != nil, fail
		cancel()
		s.drain(l.cfg.CancelGrace)
		s.settle()
	}
	if fail != nil {
		return out, fail
	}
	if out.text == "" && len(out.calls) == 0 {
		return out, &providers.Error{Provider: l.cfg.Provider.Name(), Kind: providers.ErrEmptyResponse,
			Err: errors.New("the model returned no text and no tool call")}
	}
	return out, nil
}

// event handles one stream event.
func (s *stepState) event(ev providers.Event, text, reasoning *strings.Builder, usage *providers.Usage) {
	l, n := s.l, s.n
	switch ev.Kind {
	case providers.EventText:
		text.WriteString(ev.Text)
		l.emit(TextDelta{Step: n, Text: ev.Text})
	case providers.EventReasoning:
		reasoning.WriteString(ev.Text)
		l.emit(ReasoningDelta{Step: n, Text: ev.Text})
	case providers.EventToolCallPart:
		if ev.Part != nil {
			if p, ok := s.parts.add(*ev.Part); ok {
				l.emit(p)
			}
		}
	case providers.EventToolCall:
		if ev.ToolCall != nil {
			if p, ok := s.parts.flush(ev.ToolCall.ID); ok {
				l.emit(p)
			}
			s.dispatch(*ev.ToolCall)
		}
	case providers.EventUsage:
		if u := ev.Usage; u != nil {
			addUsage(usage, *u)
			cost := l.charge(*u)
			s.out.contextTokens = u.InputTokens + u.OutputTokens
			l.emit(UsageReported{Step: n, Usage: *u, CostUSD: cost, Priced: l.cfg.Prices != nil, ContextTokens: s.out.contextTokens,
				MaxContextTokens: l.cfg.MaxContextSize})
		}
	case providers.EventStop:
		s.out.stopReason = ev.Stop
		var truncated []providers.ToolCall
		for _, c := range s.out.calls {
			if c.tc.Truncated {
				truncated = append(truncated, c.tc)
			}
		}
		l.emit(ResponseStopped{Step: n, Reason: ev.Stop, Truncated: truncated})
	}
}

// stepState is the bookkeeping of the tool calls of one attempt. It is
// only touched by the goroutine running the step.
type stepState struct {
	l           *Loop
	n           int
	ctx         context.Context
	prev        map[string]int
	byKey       map[string]*call
	out         *stepOutput
	parts       *partBuffer
	outstanding int
	// finished receives calls whose result is in; quit stops the
	// watchers once the step returns.
	finished chan *call
	quit     chan struct{}
	// cancelled is set once the attempt's calls were cancelled: results
	// still coming in are marked so. interrupted says the user cancelled
	// (else the provider failed with cause).
	cancelled   bool
	interrupted bool
	cause       error
}

// dispatch hands a call to the toolset at once (or shares the result of an
// identical call of the same step). A truncated call is answered at once,
// without running.
func (s *stepState) dispatch(tc providers.ToolCall) {
	c := &call{tc: tc, key: callKey(tc), start: time.Now()}
	s.out.calls = append(s.out.calls, c)
	if tc.Truncated {
		s.l.emit(ToolCallStarted{Step: s.n, Call: tc})
		c.end = time.Now()
		s.finish(withResult(c, truncatedResult()))
		return
	}
	if orig, ok := s.byKey[c.key]; ok {
		c.orig, c.repeat, c.reminder = orig, orig.repeat, orig.reminder
		orig.dups = append(orig.dups, c)
		s.l.emit(ToolCallStarted{Step: s.n, Call: tc, Duplicate: true})
		if orig.done {
			c.end = time.Now()
			s.complete(c, orig.result)
		}
		return
	}
	s.byKey[c.key] = c
	c.repeat = s.prev[c.key] + 1
	c.reminder = reminder(tc, c.repeat)
	s.out.repeats[c.key] = c.repeat
	s.l.emit(ToolCallStarted{Step: s.n, Call: tc})

	if c.repeat >= repeatStop {
		s.out.repeatStop = true
		c.end = time.Now()
		s.finish(withResult(c, repeatStopped(tc.Name, c.repeat)))
		return
	}

	c.dispatched = true
	p := s.l.cfg.Toolset.Handle(s.ctx, tc)
	s.outstanding++
	go func() {
		select {
		case <-p.Done():
		case <-s.quit:
			return
		}
		c.result = p.Result()
		c.end = time.Now()
		select {
		case s.finished <- c:
		case <-s.quit:
		}
	}()
}

func withResult(c *call, r toolset.Result) *call {
	c.result = r
	return c
}

// finish records the result of a call that ran, and of its duplicates.
func (s *stepState) finish(c *call) {
	// A call that answers Ok after the cancellation had finished its work.
	c.cancelled = s.cancelled && c.dispatched && c.result.Kind != toolset.Ok
	if c.cancelled {
		c.result = cancelledResult(c.result, s.interrupted, s.cause, true)
	}
	s.complete(c, c.result)
	for _, d := range c.dups {
		d.end, d.cancelled = c.end, c.cancelled
		s.complete(d, c.result)
	}
}

func (s *stepState) complete(c *call, r toolset.Result) {
	r.ToolCallID = c.tc.ID
	c.result, c.done = r, true
	s.l.emit(ToolCallFinished{Step: s.n, Call: c.tc, Result: r, Duration: c.end.Sub(c.start), Repeat: c.repeat,
		Cancelled: c.cancelled, Reminder: c.reminder})
}

// drain waits, at most grace, for the cancelled calls still running, so
// their subprocesses are gone before the step returns.
func (s *stepState) drain(grace time.Duration) {
	s.cancelled = true
	if s.outstanding == 0 {
		return
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for s.outstanding > 0 {
		select {
		case c := <-s.finished:
			s.outstanding--
			s.finish(c)
		case <-timer.C:
			return
		}
	}
}

// settle gives every call of a cancelled attempt that has no result yet
// (it did not return within the grace) one saying it was cancelled.
func (s *stepState) settle() {
	for _, c := range s.out.calls {
		if c.done || c.orig != nil {
			continue
		}
		c.cancelled, c.end = true, time.Now()
		c.result = cancelledResult(c.result, s.interrupted, s.cause, false)
		s.complete(c, c.result)
		for _, d := range c.dups {
			d.end, d.cancelled = c.end, true
			s.complete(d, c.result)
		}
	}
}

// The results of calls that did not run to their end.
const (
	interruptedStarted = "The tool call was interrupted by the user: it had started and was cancelled before it finished, so it may have partly run. Check its effects before you run it again."
	interruptedRunning = "The tool call was interrupted by the user: it had started and was cancelled, but had not stopped when the step ended, so it may have partly run. Check its effects before you run it again."
	truncatedMessage   = "The tool call was not run: your response was cut off by the output token limit before the call's arguments were complete. Retry with smaller arguments, or do the work in parts (e.g. write a large file in several smaller calls)."
)

// InterruptedCall is the result message of a call the user interrupted
// after it started (an engine that runs calls elsewhere says the same).
const InterruptedCall = interruptedStarted

// cancelledResult is the result of a call cancelled on the way; returned
// says whether the tool returned after its cancellation (its output, such as
// a command's output so far, is kept).
func cancelledResult(r toolset.Result, interrupted bool, cause error, returned bool) toolset.Result {
	out := toolset.Result{Kind: toolset.Failed, Brief: "Interrupted", Output: r.Output}
	switch {
	case interrupted && returned:
		out.Message = interruptedStarted
	case interrupted:
		out.Message = interruptedRunning
	default:
		out.Brief = "Cancelled"
		out.Message = fmt.Sprintf("The tool call was cancelled because the model's response failed (%v): it had started and may have partly run. Check its effects before you run it again.", cause)
		if !returned {
			out.Message += " It had not stopped when the step ended."
		}
	}
	return out
}

func truncatedResult() toolset.Result {
	return toolset.Result{Kind: toolset.Failed, Message: truncatedMessage, Brief: "Not run: response cut off by the output limit"}
}

// InterruptedNote is the user-side note appended to the history when the
// user interrupts a turn, so the model knows why its work stopped.
const InterruptedNote = "<system>The user interrupted you (Ctrl-C) before you finished. Tool calls that had finished kept their results; " +
	"the ones still running were cancelled, as their results say. Do not carry on with the interrupted work unless the user asks you to.</system>"

// callKey identifies a call by tool name and canonical arguments (JSON
// with sorted keys); arguments that are not JSON are taken verbatim.
func callKey(tc providers.ToolCall) string {
	return tc.Name + "\x00" + canonicalJSON(tc.Arguments)
}

func canonicalJSON(s string) string {
	t := strings.TrimSpace(s)
	if t == "" || t == "null" {
		return "{}"
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return t
	}
	b, err := json.Marshal(v)
	if err != nil {
		return t
	}
	return string(b)
}

func addUsage(sum *providers.Usage, u providers.Usage) {
	sum.InputTokens += u.InputTokens
	sum.OutputTokens += u.OutputTokens
	sum.CacheReadTokens += u.CacheReadTokens
	sum.CacheCreationTokens += u.CacheCreationTokens
}
