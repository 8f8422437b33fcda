package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func countingTool(calls *atomic.Int32) toolset.Tool {
	return &fakeTool{name: "Count", fn: func(context.Context, string, json.RawMessage) toolset.Result {
		calls.Add(1)
		return toolset.Result{Output: []providers.ContentPart{providers.TextPart("counted")}}
	}}
}

func eventsOf[T Event](r *recorder) []T {
	var out []T
	for _, ev := range r.Events() {
		if e, ok := ev.(T); ok {
			out = append(out, e)
		}
	}
	return out
}

// TestRetryKeepsCallsThatRan: the stream breaks after a complete call and
// before the next. The call runs once; it and the text before it enter the
// history before the retry, whose request shows the call's result.
func TestRetryKeepsCallsThatRan(t *testing.T) {
	for _, kind := range []providers.ErrorKind{providers.ErrConnection, providers.ErrServer} {
		t.Run(kind.String(), func(t *testing.T) {
			calls := &atomic.Int32{}
			prov := &fakeProvider{responses: [][]item{
				{text("Counting."), toolCall("c1", "Count", `{"n":1}`), fail(kind)},
				{text("Counted once.")},
			}}
			l, rec := newLoop(t, prov, newToolset(t, countingTool(calls)), nil)
			res, err := l.Turn(context.Background(), "count")
			if err != nil || res.Reason != StopDone {
				t.Fatalf("res %+v err %v", res, err)
			}
			if n := calls.Load(); n != 1 {
				t.Fatalf("the call ran %d times, want 1", n)
			}
			h := l.History()
			checkPairs(t, h)
			if roles(h) != "user,assistant,tool,assistant" || h[1].Text() != "Counting." || h[1].ToolCalls[0].ID != "c1" ||
				h[2].Text() != "counted" || h[3].Text() != "Counted once." {
				t.Fatalf("history %s %+v", roles(h), h)
			}
			reqs := prov.Requests()
			if len(reqs) != 2 || toolMessages(reqs[1].History)["c1"] != "counted" {
				t.Fatalf("the retried request does not show the call's result: %+v", reqs)
			}
			retries := eventsOf[StepRetried](rec)
			if len(retries) != 1 || len(retries[0].Kept) != 1 || retries[0].Kept[0].ID != "c1" || retries[0].Attempt != 2 {
				t.Fatalf("retry events %+v", retries)
			}
		})
	}
}

// TestRetryWaitsForRunningCall: a call still running when the stream
// breaks is not cancelled: it runs to its end and its real result is kept.
func TestRetryWaitsForRunningCall(t *testing.T) {
	tool := newBlockingTool("Block", "a")
	started := make(chan struct{})
	go func() {
		recv(t, tool.started, "tool start")
		close(started)
	}()
	prov := &fakeProvider{responses: [][]item{
		{toolCall("a", "Block", `{}`), waitFor(started), fail(providers.ErrConnection)},
		{text("done")},
	}}
	l, _ := newLoop(t, prov, newToolset(t, tool), nil)
	done := runTurn(l, context.Background())
	<-started
	select {
	case err := <-done:
		t.Fatalf("the turn ended while the call still ran: %v", err)
	default:
	}
	close(tool.release["a"])
	if err := recv(t, done, "turn"); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, tool.ended, "tool end"); err != nil {
		t.Fatalf("the call was cancelled: %v", err)
	}
	h := l.History()
	checkPairs(t, h)
	if got := toolMessages(h)["a"]; got != "out a" {
		t.Fatalf("result %q", got)
	}
	if got := toolMessages(prov.Requests()[1].History)["a"]; got != "out a" {
		t.Fatalf("retried request: %q", got)
	}
}

// TestRetryExhaustedKeepsEveryAttempt: each failed attempt's call ran once
// and stays, with its result, when the retries run out.
func TestRetryExhaustedKeepsEveryAttempt(t *testing.T) {
	calls := &atomic.Int32{}
	prov := &fakeProvider{more: func(i int) []item {
		return []item{toolCall(fmt.Sprint("c", i+1), "Count", fmt.Sprintf(`{"i":%d}`, i)), fail(providers.ErrServer)}
	}}
	l, _ := newLoop(t, prov, newToolset(t, countingTool(calls)), nil)
	_, err := l.Turn(context.Background(), "x")
	var re *RetriesExhaustedError
	if !errors.As(err, &re) {
		t.Fatalf("err %v", err)
	}
	h := l.History()
	checkPairs(t, h)
	if calls.Load() != 3 || roles(h) != "user,assistant,tool,assistant,tool,assistant,tool" {
		t.Fatalf("calls %d history %s", calls.Load(), roles(h))
	}
}

// TestInterruptKeepsWhatHappened: Ctrl-C while one call has finished and
// another runs. The step enters the history with both calls: the finished
// one with its real result, the running one cancelled, with a result saying
// the user interrupted it after it had started; then the user-side note.
func TestInterruptKeepsWhatHappened(t *testing.T) {
	tool := newBlockingTool("Block", "a") // "b" waits for its ctx
	aDone := make(chan struct{})
	rec := &recorder{}
	obs := ObserverFunc(func(e Event) {
		rec.Observe(e)
		if f, ok := e.(ToolCallFinished); ok && f.Call.ID == "a" && !f.Cancelled {
			close(aDone)
		}
	})
	prov := &fakeProvider{responses: [][]item{
		{text("Two things."), toolCall("a", "Block", `{"i":1}`), toolCall("b", "Block", `{"i":2}`), waitFor(make(chan struct{}))},
		{text("Picking up.")},
	}}
	l, _ := newLoop(t, prov, newToolset(t, tool), func(c *Config) { c.Observer = obs })
	ctx, cancel := context.WithCancel(context.Background())
	done := runTurn(l, ctx)
	recv(t, tool.started, "first start")
	recv(t, tool.started, "second start")
	close(tool.release["a"])
	recv(t, aDone, "a finished")
	cancel()
	if err := recv(t, done, "turn"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if err := recv(t, tool.ended, "a end"); err != nil {
		t.Fatalf("a: %v", err)
	}
	if err := recv(t, tool.ended, "b end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("b was not cancelled: %v", err)
	}

	h := l.History()
	checkPairs(t, h)
	if got := roles(h); got != "user,assistant,tool,tool,user" {
		t.Fatalf("history %s", got)
	}
	if h[1].Text() != "Two things." || len(h[1].ToolCalls) != 2 {
		t.Fatalf("assistant %+v", h[1])
	}
	msgs := toolMessages(h)
	if msgs["a"] != "out a" {
		t.Errorf("finished call: %q", msgs["a"])
	}
	if b := msgs["b"]; !strings.Contains(b, "interrupted by the user") || !strings.Contains(b, "had started") || !h[3].IsError {
		t.Errorf("cancelled call: %q", b)
	}
	if h[4].Text() != InterruptedNote {
		t.Errorf("note %q", h[4].Text())
	}
	ints := eventsOf[StepInterrupted](rec)
	if len(ints) != 1 || len(ints[0].Calls) != 2 || ints[0].Text != "Two things." {
		t.Fatalf("interrupted events %+v", ints)
	}
	for _, f := range eventsOf[ToolCallFinished](rec) {
		if (f.Call.ID == "b") != f.Cancelled {
			t.Errorf("finished event %+v", f)
		}
	}
	evs := rec.Events()
	if end, ok := evs[len(evs)-1].(TurnEnded); !ok || end.Reason != StopCancelled {
		t.Fatalf("last event %#v", evs[len(evs)-1])
	}
	if len(eventsOf[TurnFailed](rec)) != 0 {
		t.Fatal("a cancelled turn reported a failure")
	}

	// The next turn continues from that history.
	if _, err := l.Turn(context.Background(), "go on"); err != nil {
		t.Fatal(err)
	}
	next := prov.Requests()[1].History
	checkPairs(t, next)
	if roles(next) != "user,assistant,tool,tool,user,user" {
		t.Fatalf("next request %s", roles(next))
	}
}

// TestInterruptBeforeAnyOutput: nothing streamed, nothing kept but the
// note.
func TestInterruptBeforeAnyOutput(t *testing.T) {
	block := make(chan struct{})
	prov := &fakeProvider{responses: [][]item{{waitFor(block)}}}
	streaming := make(chan struct{})
	l, _ := newLoop(t, prov, newToolset(t), func(c *Config) {
		c.Observer = ObserverFunc(func(e Event) {
			if _, ok := e.(StepStarted); ok {
				close(streaming)
			}
		})
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := runTurn(l, ctx)
	recv(t, streaming, "step start")
	cancel()
	if err := recv(t, done, "turn"); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if got := roles(l.History()); got != "user,user" {
		t.Fatalf("history %s", got)
	}
}

// TestProviderErrorCancelsTools: a provider failure that is not retried
// cancels the running call; it stays in the history with a result saying
// why it was cancelled.
func TestProviderErrorCancelsTools(t *testing.T) {
	tool := newBlockingTool("Block")
	started := make(chan struct{})
	go func() {
		recv(t, tool.started, "tool start")
		close(started)
	}()
	prov := &fakeProvider{responses: [][]item{{toolCall("a", "Block", `{}`), waitFor(started), fail(providers.ErrBadRequest)}}}
	l, _ := newLoop(t, prov, newToolset(t, tool), nil)
	err := recv(t, runTurn(l, context.Background()), "turn")
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.ErrBadRequest {
		t.Fatalf("err %v", err)
	}
	// The cancelled tool has returned before the step gave up.
	select {
	case err := <-tool.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("tool ctx: %v", err)
		}
	default:
		t.Fatal("the tool was still running when the turn ended")
	}
	h := l.History()
	checkPairs(t, h)
	if got := toolMessages(h)["a"]; !strings.Contains(got, "cancelled because the model's response failed") {
		t.Fatalf("history %s: %q", roles(h), got)
	}
}

// TestTruncatedCall: a call cut off by the output limit is not run; its
// result tells the model why and what to do; the stop is reported.
func TestTruncatedCall(t *testing.T) {
	calls := &atomic.Int32{}
	prov := &fakeProvider{responses: [][]item{
		{text("Writing."), toolCall("c1", "Count", `{"n":1}`), truncatedCall("c2", "Count", `{"n":`), stop(providers.StopMaxTokens)},
		{text("Retrying in parts."), stop(providers.StopEnd)},
	}}
	l, rec := newLoop(t, prov, newToolset(t, countingTool(calls)), nil)
	res, err := l.Turn(context.Background(), "write")
	if err != nil || res.ModelStop != providers.StopEnd {
		t.Fatalf("res %+v err %v", res, err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d calls ran, want 1 (the truncated one is not run)", n)
	}
	h := l.History()
	checkPairs(t, h)
	got := toolMessages(h)["c2"]
	for _, want := range []string{"<system>ERROR: The tool call was not run", "output token limit", "smaller arguments", "in parts"} {
		if !strings.Contains(got, want) {
			t.Errorf("truncated call's result lacks %q: %q", want, got)
		}
	}
	stops := eventsOf[ResponseStopped](rec)
	if len(stops) != 2 || stops[0].Reason != providers.StopMaxTokens || len(stops[0].Truncated) != 1 || stops[0].Truncated[0].ID != "c2" {
		t.Fatalf("stop events %+v", stops)
	}
}

// TestTextTruncated: a text-only response cut off ends the turn, with the
// stop reason in TurnEnded.
func TestTextTruncated(t *testing.T) {
	prov := &fakeProvider{responses: [][]item{{text("A long ans"), stop(providers.StopMaxTokens)}}}
	l, rec := newLoop(t, prov, newToolset(t), nil)
	res, err := l.Turn(context.Background(), "x")
	if err != nil || res.Reason != StopDone || res.ModelStop != providers.StopMaxTokens {
		t.Fatalf("res %+v err %v", res, err)
	}
	ends := eventsOf[TurnEnded](rec)
	if len(ends) != 1 || ends[0].ModelStop != providers.StopMaxTokens {
		t.Fatalf("turn end %+v", ends)
	}
}

// TestInterruptKeepsText: an interrupted step without calls keeps the
// text streamed so far; reasoning alone is not kept.
func TestInterruptKeepsText(t *testing.T) {
	for _, tt := range []struct {
		name  string
		items []item
		roles string
	}{
		{"text", []item{reasoning("hm"), text("Half an ans")}, "user,assistant,user"},
		{"reasoning only", []item{reasoning("hm")}, "user,user"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			streamed := make(chan struct{})
			items := append(tt.items, waitFor(make(chan struct{})))
			prov := &fakeProvider{responses: [][]item{items}}
			n := 0
			l, _ := newLoop(t, prov, newToolset(t), func(c *Config) {
				c.Observer = ObserverFunc(func(e Event) {
					switch e.(type) {
					case TextDelta, ReasoningDelta:
						if n++; n == len(tt.items) {
							close(streamed)
						}
					}
				})
			})
			ctx, cancel := context.WithCancel(context.Background())
			done := runTurn(l, ctx)
			recv(t, streamed, "the stream")
			cancel()
			if err := recv(t, done, "turn"); !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			h := l.History()
			if got := roles(h); got != tt.roles {
				t.Fatalf("history %s", got)
			}
			if tt.name == "text" && (h[1].Text() != "Half an ans" || h[1].Reasoning != "hm") {
				t.Fatalf("assistant %+v", h[1])
			}
		})
	}
}

// TestRepeatStopInABrokenAttempt: the 12th repeat in an attempt whose
// stream then breaks still ends the turn, with that attempt as its last
// step.
func TestRepeatStopInABrokenAttempt(t *testing.T) {
	calls := &atomic.Int32{}
	prov := &fakeProvider{more: func(i int) []item {
		resp := []item{toolCall(fmt.Sprint("c", i+1), "Count", `{"same":true}`)}
		if i == 11 {
			resp = append(resp, fail(providers.ErrConnection))
		}
		return resp
	}}
	l, _ := newLoop(t, prov, newToolset(t, countingTool(calls)), nil)
	res, err := l.Turn(context.Background(), "x")
	if err != nil || res.Reason != StopToolCallRepeat || len(prov.Requests()) != 12 || calls.Load() != 11 {
		t.Fatalf("res %+v err %v requests %d calls %d", res, err, len(prov.Requests()), calls.Load())
	}
	checkPairs(t, l.History())
}
