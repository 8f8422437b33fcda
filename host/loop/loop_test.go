package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// toolMessages returns the tool messages of history, by tool call id.
func toolMessages(h []providers.Message) map[string]string {
	m := map[string]string{}
	for _, msg := range h {
		if msg.Role == providers.RoleTool {
			m[msg.ToolCallID] = msg.Text()
		}
	}
	return m
}

func roles(h []providers.Message) string {
	var s []string
	for _, m := range h {
		s = append(s, string(m.Role))
	}
	return strings.Join(s, ",")
}

func TestTurn(t *testing.T) {
	type env struct {
		res   TurnResult
		err   error
		loop  *Loop
		prov  *fakeProvider
		rec   *recorder
		calls *atomic.Int32 // calls to the counting tool
	}
	counting := func(calls *atomic.Int32, out string) toolset.Tool {
		return &fakeTool{name: "Count", fn: func(context.Context, string, json.RawMessage) toolset.Result {
			calls.Add(1)
			return toolset.Result{Output: []providers.ContentPart{providers.TextPart(out)}, Brief: out}
		}}
	}
	tests := []struct {
		name      string
		responses [][]item
		more      func(i int) []item
		tools     func(calls *atomic.Int32) []toolset.Tool
		maxSteps  int
		check     func(t *testing.T, e env)
	}{
		{
			name:      "answer without tools",
			responses: [][]item{{reasoning("hm"), text("Hel"), text("lo"), usage(10, 2)}},
			check: func(t *testing.T, e env) {
				if e.err != nil || e.res.Reason != StopDone || e.res.Steps != 1 {
					t.Fatalf("res %+v err %v", e.res, e.err)
				}
				h := e.loop.History()
				if roles(h) != "user,assistant" || h[1].Text() != "Hello" || h[1].Reasoning != "hm" {
					t.Fatalf("history %+v", h)
				}
				if e.res.Usage != (providers.Usage{InputTokens: 10, OutputTokens: 2}) {
					t.Fatalf("usage %+v", e.res.Usage)
				}
				req := e.prov.Requests()[0]
				if req.System != "sys" || len(req.Tools) != 3 || req.Tools[0].Name != "Count" {
					t.Fatalf("request %+v", req)
				}
				evs := e.rec.Events()
				last, ok := evs[len(evs)-1].(TurnEnded)
				if !ok || last.Steps != 1 || last.Reason != StopDone || last.Usage.Total() != 12 {
					t.Fatalf("last event %#v", evs[len(evs)-1])
				}
			},
		},
		{
			name: "tool step then answer",
			responses: [][]item{
				{text("Let me count."), toolCall("c1", "Count", `{"n":1}`)},
				{text("Counted.")},
			},
			check: func(t *testing.T, e env) {
				if e.err != nil || e.res.Steps != 2 || e.calls.Load() != 1 {
					t.Fatalf("res %+v err %v calls %d", e.res, e.err, e.calls.Load())
				}
				h := e.loop.History()
				if roles(h) != "user,assistant,tool,assistant" {
					t.Fatalf("roles %s", roles(h))
				}
				if h[1].Text() != "Let me count." || len(h[1].ToolCalls) != 1 || h[1].ToolCalls[0].ID != "c1" {
					t.Fatalf("assistant %+v", h[1])
				}
				if h[2].ToolCallID != "c1" || h[2].Text() != "ok" {
					t.Fatalf("tool message %+v", h[2])
				}
				// The second request saw the first step.
				if got := roles(e.prov.Requests()[1].History); got != "user,assistant,tool" {
					t.Fatalf("second request history %s", got)
				}
			},
		},
		{
			name: "retryable error then success",
			responses: [][]item{
				{text("partial"), fail(providers.ErrServer)},
				{text("whole")},
			},
			check: func(t *testing.T, e env) {
				if e.err != nil || e.res.Steps != 1 {
					t.Fatalf("res %+v err %v", e.res, e.err)
				}
				if h := e.loop.History(); roles(h) != "user,assistant" || h[1].Text() != "whole" {
					t.Fatalf("history %+v", h)
				}
				var retries []StepRetried
				for _, ev := range e.rec.Events() {
					if r, ok := ev.(StepRetried); ok {
						retries = append(retries, r)
					}
				}
				if len(retries) != 1 || retries[0].Attempt != 2 || retries[0].MaxAttempts != 3 || !providers.IsRetryable(retries[0].Err) {
					t.Fatalf("retries %+v", retries)
				}
			},
		},
		{
			name:      "non-retryable error fails at once",
			responses: [][]item{{fail(providers.ErrAuth)}, {text("never")}},
			check: func(t *testing.T, e env) {
				var pe *providers.Error
				if !errors.As(e.err, &pe) || pe.Kind != providers.ErrAuth || e.res.Reason != StopError {
					t.Fatalf("err %v res %+v", e.err, e.res)
				}
				if n := len(e.prov.Requests()); n != 1 {
					t.Fatalf("%d requests, want 1", n)
				}
				if roles(e.loop.History()) != "user" {
					t.Fatalf("history %s", roles(e.loop.History()))
				}
			},
		},
		{
			name:      "retries exhausted",
			responses: [][]item{{fail(providers.ErrRateLimit)}, {fail(providers.ErrConnection)}, {fail(providers.ErrServer)}, {text("too late")}},
			check: func(t *testing.T, e env) {
				var re *RetriesExhaustedError
				if !errors.As(e.err, &re) || re.Attempts != 3 || !providers.IsRetryable(e.err) {
					t.Fatalf("err %v", e.err)
				}
				if !strings.Contains(e.err.Error(), "failed after 3 attempts") {
					t.Fatalf("err text %q", e.err)
				}
				if n := len(e.prov.Requests()); n != 3 {
					t.Fatalf("%d requests, want 3", n)
				}
			},
		},
		{
			name:      "empty response",
			responses: [][]item{{usage(1, 0)}, {reasoning("only thinking")}, {}},
			check: func(t *testing.T, e env) {
				var pe *providers.Error
				if !errors.As(e.err, &pe) || pe.Kind != providers.ErrEmptyResponse {
					t.Fatalf("err %v", e.err)
				}
				if n := len(e.prov.Requests()); n != 3 {
					t.Fatalf("%d requests, want 3 (empty responses are retried)", n)
				}
				if roles(e.loop.History()) != "user" {
					t.Fatalf("history %s", roles(e.loop.History()))
				}
			},
		},
		{
			name: "max steps",
			more: func(i int) []item {
				return []item{toolCall(fmt.Sprint("c", i), "Count", fmt.Sprintf(`{"i":%d}`, i))}
			},
			maxSteps: 3,
			check: func(t *testing.T, e env) {
				var me *MaxStepsError
				if !errors.As(e.err, &me) || e.err.Error() != "Max number of steps reached: 3" {
					t.Fatalf("err %v", e.err)
				}
				if e.res.Steps != 3 || e.calls.Load() != 3 || len(e.prov.Requests()) != 3 {
					t.Fatalf("res %+v calls %d requests %d", e.res, e.calls.Load(), len(e.prov.Requests()))
				}
				if got := roles(e.loop.History()); got != "user"+strings.Repeat(",assistant,tool", 3) {
					t.Fatalf("history %s", got)
				}
			},
		},
		{
			name: "same-step duplicates run once",
			responses: [][]item{
				{toolCall("c1", "Count", `{"a":1,"b":[2,3]}`), toolCall("c2", "Count", ` { "b": [2, 3], "a": 1 } `), toolCall("c3", "Count", `{"a":2}`)},
				{text("done")},
			},
			check: func(t *testing.T, e env) {
				if e.err != nil || e.calls.Load() != 2 {
					t.Fatalf("err %v calls %d (want 2: c1 and c3)", e.err, e.calls.Load())
				}
				h := e.loop.History()
				if roles(h) != "user,assistant,tool,tool,tool,assistant" {
					t.Fatalf("roles %s", roles(h))
				}
				for i, id := range []string{"c1", "c2", "c3"} {
					if h[2+i].ToolCallID != id || h[2+i].Text() != "ok" {
						t.Fatalf("tool message %d: %+v", i, h[2+i])
					}
				}
				var dups int
				for _, ev := range e.rec.Events() {
					if s, ok := ev.(ToolCallStarted); ok && s.Duplicate {
						dups++
						if s.Call.ID != "c2" {
							t.Fatalf("duplicate %+v", s)
						}
					}
				}
				if dups != 1 {
					t.Fatalf("%d duplicate events", dups)
				}
			},
		},
		{
			name: "repeat guard",
			more: func(i int) []item {
				return []item{toolCall(fmt.Sprint("c", i+1), "Count", `{"same":true}`)}
			},
			check: func(t *testing.T, e env) {
				if e.err != nil || e.res.Reason != StopToolCallRepeat || e.res.Steps != 12 {
					t.Fatalf("res %+v err %v (want reason tool_call_repeat, no error)", e.res, e.err)
				}
				if e.calls.Load() != 11 {
					t.Fatalf("the tool ran %d times, want 11 (the 12th is not run)", e.calls.Load())
				}
				msgs := toolMessages(e.loop.History())
				for n := 1; n <= 12; n++ {
					got := msgs[fmt.Sprint("c", n)]
					hasReminder := strings.Contains(got, "same arguments")
					wantReminder := n == 3 || n == 5 || n == 8 || n == 12
					if hasReminder != wantReminder {
						t.Errorf("call %d: reminder %v, want %v: %q", n, hasReminder, wantReminder, got)
					}
				}
				// The reminders escalate: the 5th names the tool, the count
				// and the arguments; the 8th says dead end, no tool next.
				if got := msgs["c3"]; strings.Contains(got, "`Count`") {
					t.Errorf("3rd reminder names the tool: %q", got)
				}
				for _, want := range []string{"`Count` 5 times in a row", `{"same":true}`} {
					if !strings.Contains(msgs["c5"], want) {
						t.Errorf("5th reminder lacks %q: %q", want, msgs["c5"])
					}
				}
				for _, want := range []string{"dead end", "must not call a tool in your next response", "8 times"} {
					if !strings.Contains(msgs["c8"], want) {
						t.Errorf("8th reminder lacks %q: %q", want, msgs["c8"])
					}
				}
				if !strings.Contains(msgs["c12"], "<system>ERROR: The call was not run") {
					t.Errorf("12th call: %q", msgs["c12"])
				}
				// The reminder the model saw is in the finished event.
				reminders := map[string]string{}
				for _, ev := range e.rec.Events() {
					switch ev := ev.(type) {
					case ToolCallFinished:
						reminders[ev.Call.ID] = ev.Reminder
					case TurnFailed:
						t.Errorf("the repeat guard reported a failure: %v", ev.Err)
					}
				}
				for _, id := range []string{"c3", "c5", "c8"} {
					if reminders[id] == "" || !strings.Contains(msgs[id], reminders[id]) {
						t.Errorf("%s: event reminder %q, tool message %q", id, reminders[id], msgs[id])
					}
				}
				if reminders["c4"] != "" {
					t.Errorf("c4 reminder %q", reminders["c4"])
				}
			},
		},
		{
			name: "repeats must be consecutive",
			more: func(i int) []item {
				if i >= 14 {
					return []item{text("enough")}
				}
				if i%4 == 3 { // a different call breaks the run every 4th step
					return []item{toolCall(fmt.Sprint("c", i+1), "Count", `{"other":true}`)}
				}
				return []item{toolCall(fmt.Sprint("c", i+1), "Count", `{"same":true}`)}
			},
			check: func(t *testing.T, e env) {
				if e.err != nil || e.res.Steps != 15 {
					t.Fatalf("res %+v err %v", e.res, e.err)
				}
				msgs := toolMessages(e.loop.History())
				for id, m := range msgs {
					want := id == "c3" || id == "c7" || id == "c11" || id == "c15"
					if strings.Contains(m, "same arguments") != want {
						t.Errorf("%s: %q", id, m)
					}
				}
			},
		},
		{
			name: "plain rejection ends the turn",
			responses: [][]item{
				{toolCall("c1", "Reject", `{}`), toolCall("c2", "Count", `{}`)},
				{text("never asked")},
			},
			check: func(t *testing.T, e env) {
				if e.err != nil || e.res.Reason != StopRejected || e.res.Steps != 1 {
					t.Fatalf("res %+v err %v", e.res, e.err)
				}
				if n := len(e.prov.Requests()); n != 1 {
					t.Fatalf("%d requests", n)
				}
				msgs := toolMessages(e.loop.History())
				if !strings.Contains(msgs["c1"], "Stop what you are doing") || msgs["c2"] != "ok" {
					t.Fatalf("tool messages %q", msgs)
				}
			},
		},
		{
			name: "rejection with feedback goes on",
			responses: [][]item{
				{toolCall("c1", "RejectFB", `{}`)},
				{text("Understood, using rg instead.")},
			},
			check: func(t *testing.T, e env) {
				if e.err != nil || e.res.Reason != StopDone || e.res.Steps != 2 {
					t.Fatalf("res %+v err %v", e.res, e.err)
				}
				second := e.prov.Requests()[1].History
				if got := toolMessages(second)["c1"]; !strings.Contains(got, "User feedback: use rg") {
					t.Fatalf("the model did not see the feedback: %q", got)
				}
			},
		},
		{
			name: "unknown tool is an error result, not a turn error",
			responses: [][]item{
				{toolCall("c1", "Nope", `{}`)},
				{text("sorry")},
			},
			check: func(t *testing.T, e env) {
				if e.err != nil {
					t.Fatal(e.err)
				}
				if got := toolMessages(e.loop.History())["c1"]; got != "<system>ERROR: Tool `Nope` not found</system>" {
					t.Fatalf("%q", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := &atomic.Int32{}
			tools := []toolset.Tool{counting(calls, "ok"),
				&fakeTool{name: "Reject", fn: func(context.Context, string, json.RawMessage) toolset.Result { return toolset.RejectedResult("") }},
				&fakeTool{name: "RejectFB", fn: func(context.Context, string, json.RawMessage) toolset.Result { return toolset.RejectedResult("use rg") }},
			}
			if tt.tools != nil {
				tools = tt.tools(calls)
			}
			prov := &fakeProvider{responses: tt.responses, more: tt.more}
			l, rec := newLoop(t, prov, newToolset(t, tools...), func(c *Config) { c.MaxStepsPerTurn = tt.maxSteps })
			res, err := l.Turn(context.Background(), "hi")
			tt.check(t, env{res: res, err: err, loop: l, prov: prov, rec: rec, calls: calls})
		})
	}
}

// blockingTool reports each call's start on started and returns when
// release is closed (or its ctx ends, reporting ctx.Err on ended).
type blockingTool struct {
	name    string
	started chan string
	release map[string]chan struct{} // by call id; nil entry = wait for ctx
	ended   chan error
}

func newBlockingTool(name string, ids ...string) *blockingTool {
	b := &blockingTool{name: name, started: make(chan string, 16), release: map[string]chan struct{}{}, ended: make(chan error, 16)}
	for _, id := range ids {
		b.release[id] = make(chan struct{})
	}
	return b
}

func (b *blockingTool) Spec() toolset.Spec {
	return toolset.Spec{Name: b.name, Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (b *blockingTool) Call(ctx context.Context, id string, _ json.RawMessage) toolset.Result {
	b.started <- id
	select {
	case <-b.release[id]:
		b.ended <- nil
		return toolset.Result{Output: []providers.ContentPart{providers.TextPart("out " + id)}, Brief: "brief " + id}
	case <-ctx.Done():
		b.ended <- ctx.Err()
		return toolset.RuntimeError(ctx.Err())
	}
}

func runTurn(l *Loop, ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := l.Turn(ctx, "go")
		done <- err
	}()
	return done
}

func TestParallelCallsOverlap(t *testing.T) {
	tool := newBlockingTool("Block", "a", "b")
	prov := &fakeProvider{responses: [][]item{
		{toolCall("a", "Block", `{"x":1}`), toolCall("b", "Block", `{"x":2}`)},
		{text("done")},
	}}
	l, _ := newLoop(t, prov, newToolset(t, tool), nil)
	done := runTurn(l, context.Background())
	// Both calls start while neither has been released.
	got := map[string]bool{recv(t, tool.started, "first start"): true, recv(t, tool.started, "second start"): true}
	if !got["a"] || !got["b"] {
		t.Fatalf("started %v", got)
	}
	close(tool.release["a"])
	close(tool.release["b"])
	if err := recv(t, done, "turn"); err != nil {
		t.Fatal(err)
	}
}

func TestCallDispatchedBeforeStreamEnds(t *testing.T) {
	tool := newBlockingTool("Block", "a")
	toolStarted := make(chan struct{})
	go func() {
		recv(t, tool.started, "tool start")
		close(toolStarted)
		close(tool.release["a"])
	}()
	prov := &fakeProvider{responses: [][]item{
		// The stream does not go on until the tool has started.
		{toolCall("a", "Block", `{}`), waitFor(toolStarted), text("still streaming")},
		{text("done")},
	}}
	l, _ := newLoop(t, prov, newToolset(t, tool), nil)
	if err := recv(t, runTurn(l, context.Background()), "turn"); err != nil {
		t.Fatal(err)
	}
	if h := l.History(); h[1].Text() != "still streaming" || h[2].Text() != "out a" {
		t.Fatalf("history %+v", h)
	}
}

func TestResultsInCallOrder(t *testing.T) {
	ids := []string{"a", "b", "c"}
	tool := newBlockingTool("Block", ids...)
	prov := &fakeProvider{responses: [][]item{
		{toolCall("a", "Block", `{"i":1}`), toolCall("b", "Block", `{"i":2}`), toolCall("c", "Block", `{"i":3}`)},
		{text("done")},
	}}
	rec := &recorder{}
	finished := make(chan string, len(ids))
	l, _ := newLoop(t, prov, newToolset(t, tool), func(c *Config) {
		c.Observer = ObserverFunc(func(e Event) {
			rec.Observe(e)
			if f, ok := e.(ToolCallFinished); ok {
				finished <- f.Call.ID
			}
		})
	})
	done := runTurn(l, context.Background())
	for range ids {
		recv(t, tool.started, "start")
	}
	// Release in reverse order, one at a time: each result is reported
	// as it comes, before the next call is released.
	for _, id := range []string{"c", "b", "a"} {
		close(tool.release[id])
		if got := recv(t, finished, "end of "+id); got != id {
			t.Fatalf("finished %s, want %s", got, id)
		}
	}
	if err := recv(t, done, "turn"); err != nil {
		t.Fatal(err)
	}
	for _, ev := range rec.Events() {
		if f, ok := ev.(ToolCallFinished); ok {
			if f.Result.Brief != "brief "+f.Call.ID || f.Result.IsError() || f.Duration <= 0 || f.Cancelled {
				t.Errorf("finished event %+v", f)
			}
		}
	}
	h := l.History()
	var got []string
	for _, m := range h[2:5] {
		got = append(got, m.ToolCallID+"="+m.Text())
	}
	if want := []string{"a=out a", "b=out b", "c=out c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("tool messages %v, want %v", got, want)
	}
}

func TestConcurrentToolAndStreamEvents(t *testing.T) {
	// A finished event for a fast tool arrives while the stream still runs.
	tool := newBlockingTool("Block", "a")
	close(tool.release["a"])
	ended := make(chan struct{})
	rec := &recorder{}
	obs := ObserverFunc(func(e Event) {
		rec.Observe(e)
		if _, ok := e.(ToolCallFinished); ok {
			close(ended)
		}
	})
	prov := &fakeProvider{responses: [][]item{
		{toolCall("a", "Block", `{}`), waitFor(ended), text("after")},
		{text("done")},
	}}
	l, _ := newLoop(t, prov, newToolset(t, tool), func(c *Config) { c.Observer = obs })
	if err := recv(t, runTurn(l, context.Background()), "turn"); err != nil {
		t.Fatal(err)
	}
}
