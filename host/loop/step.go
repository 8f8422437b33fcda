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

// The repeat guard: a call (same tool, same canonical arguments) made in
// consecutive steps gets a reminder appended to its tool message on the
// occurrences listed in reminderAt, and the turn is stopped at the
// repeatStop-th occurrence (that call is not run).
var reminderAt = map[int]bool{3: true, 5: true, 8: true}

const repeatStop = 12

func reminder(tool string, n int) string {
	if !reminderAt[n] {
		return ""
	}
	return fmt.Sprintf("<system>You have called `%s` with the same arguments %d times in a row and the result does not change. "+
		"Do not repeat the call: try a different approach, or stop and tell the user what blocks you.</system>", tool, n)
}

func repeatStopped(tool string, n int) toolset.Result {
	msg := fmt.Sprintf("The call was not run: `%s` was called with the same arguments %d times in a row, so the turn is stopped.", tool, n)
	return toolset.Result{Kind: toolset.Failed, Message: msg, Brief: "Stopped: repeated call"}
}

// call is one tool call of a step.
type call struct {
	tc     providers.ToolCall
	key    string
	repeat int
	start  time.Time
	end    time.Time
	// orig is the identical earlier call of the step this one shares a
	// result with; dups are the calls sharing this one's result.
	orig   *call
	dups   []*call
	done   bool
	result toolset.Result
}

// stepOutput is a completed step.
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
	// stop ends the turn after this step is appended.
	stop error
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
		if r := reminder(c.tc.Name, c.repeat); r != "" {
			tm.Content = append(tm.Content, providers.TextPart(r))
		}
		msgs = append(msgs, tm)
	}
	msgs[0] = msg
	return msgs
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

type streamItem struct {
	ev  providers.Event
	err error
}

// step runs one attempt at a step. On error every pending tool call is
// cancelled (and awaited, up to CancelGrace) and nothing is returned.
func (l *Loop) step(ctx context.Context, n int, prevRepeats map[string]int, usage *providers.Usage) (*stepOutput, error) {
	// sctx bounds the stream and every tool call of this attempt.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()

	stream, err := l.cfg.Provider.Stream(sctx, providers.Request{
		System: l.cfg.System, History: l.snapshot(), Tools: l.cfg.Toolset.Tools(),
	})
	if err != nil {
		return nil, err
	}
	items := make(chan streamItem)
	go func() {
		defer stream.Close()
		for {
			ev, err := stream.Next()
			select {
			case items <- streamItem{ev, err}:
			case <-sctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	s := &stepState{l: l, n: n, ctx: sctx, prev: prevRepeats, byKey: map[string]*call{},
		finished: make(chan *call), quit: make(chan struct{}),
		out: &stepOutput{repeats: map[string]int{}}}
	defer close(s.quit)

	var text, reasoning strings.Builder
	streaming := true
	var fail error
	for fail == nil && (streaming || s.outstanding > 0) {
		select {
		case it := <-items:
			switch {
			case errors.Is(it.err, io.EOF):
				streaming = false
				if ss, ok := stream.(providers.SignedStream); ok {
					s.out.signature = ss.ReasoningSignature()
				}
			case it.err != nil:
				fail = it.err
			default:
				switch it.ev.Kind {
				case providers.EventText:
					text.WriteString(it.ev.Text)
					l.emit(TextDelta{Step: n, Text: it.ev.Text})
				case providers.EventReasoning:
					reasoning.WriteString(it.ev.Text)
					l.emit(ReasoningDelta{Step: n, Text: it.ev.Text})
				case providers.EventToolCall:
					if it.ev.ToolCall != nil {
						s.dispatch(*it.ev.ToolCall)
					}
				case providers.EventUsage:
					if u := it.ev.Usage; u != nil {
						addUsage(usage, *u)
						s.out.contextTokens = u.InputTokens + u.OutputTokens
						l.emit(UsageReported{Step: n, Usage: *u})
					}
				}
			}
		case c := <-s.finished:
			s.outstanding--
			if ctx.Err() != nil {
				fail = ctx.Err()
				s.cancelled = true
			}
			s.finish(c)
		case <-ctx.Done():
			fail = ctx.Err()
		}
	}
	// A step whose context ended is not committed, even if its calls all
	// returned (cancelled tools return at once with an error).
	if ctx.Err() != nil {
		fail = ctx.Err()
	}
	if fail != nil {
		cancel()
		s.drain(l.cfg.CancelGrace)
		return nil, fail
	}

	out := s.out
	out.text, out.reasoning = text.String(), reasoning.String()
	if out.text == "" && len(out.calls) == 0 {
		return nil, &providers.Error{Provider: l.cfg.Provider.Name(), Kind: providers.ErrEmptyResponse,
			Err: errors.New("the model returned no text and no tool call")}
	}
	return out, nil
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
	outstanding int
	// finished receives calls whose result is in; quit stops the
	// watchers once the step returns.
	finished chan *call
	quit     chan struct{}
	// cancelled is set once the attempt has failed: results still coming
	// in are discarded.
	cancelled bool
}

// dispatch hands a call to the toolset at once (or shares the result of an
// identical call of the same step).
func (s *stepState) dispatch(tc providers.ToolCall) {
	c := &call{tc: tc, key: callKey(tc), start: time.Now()}
	s.out.calls = append(s.out.calls, c)
	if orig, ok := s.byKey[c.key]; ok {
		c.orig, c.repeat = orig, orig.repeat
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
	s.out.repeats[c.key] = c.repeat
	s.l.emit(ToolCallStarted{Step: s.n, Call: tc})

	if c.repeat >= repeatStop {
		if s.out.stop == nil {
			s.out.stop = &RepeatError{Tool: tc.Name, Count: c.repeat}
		}
		c.end = time.Now()
		s.finish(withResult(c, repeatStopped(tc.Name, c.repeat)))
		return
	}

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
	s.complete(c, c.result)
	for _, d := range c.dups {
		d.end = c.end
		s.complete(d, c.result)
	}
}

func (s *stepState) complete(c *call, r toolset.Result) {
	r.ToolCallID = c.tc.ID
	c.result, c.done = r, true
	s.l.emit(ToolCallFinished{Step: s.n, Call: c.tc, Result: r, Duration: c.end.Sub(c.start), Repeat: c.repeat, Cancelled: s.cancelled})
}

// drain waits, at most grace, for the cancelled calls still running, so
// their subprocesses are gone before the next attempt.
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
