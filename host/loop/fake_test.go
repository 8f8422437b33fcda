package loop

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// bound is the generous limit for anything a test waits on; reaching it
// means the test failed, never that it is slow.
const bound = 10 * time.Second

// item is one element of a fake response: an event, an error, or a wait
// for a channel to close.
type item struct {
	ev   providers.Event
	err  error
	wait <-chan struct{}
}

func text(s string) item { return item{ev: providers.Event{Kind: providers.EventText, Text: s}} }
func reasoning(s string) item {
	return item{ev: providers.Event{Kind: providers.EventReasoning, Text: s}}
}
func toolCall(id, name, args string) item {
	return item{ev: providers.Event{Kind: providers.EventToolCall, ToolCall: &providers.ToolCall{ID: id, Name: name, Arguments: args}}}
}
func usage(in, out int64) item {
	return item{ev: providers.Event{Kind: providers.EventUsage, Usage: &providers.Usage{InputTokens: in, OutputTokens: out}}}
}
func fail(kind providers.ErrorKind) item {
	return item{err: &providers.Error{Provider: "fake", Kind: kind, Err: errors.New("boom")}}
}
func waitFor(ch <-chan struct{}) item { return item{wait: ch} }

// fakeProvider plays responses in order; after them, more (if set) makes
// response number i (0-based), else Stream fails with ErrScriptExhausted.
type fakeProvider struct {
	mu        sync.Mutex
	responses [][]item
	more      func(i int) []item
	requests  []providers.Request
}

func (p *fakeProvider) Name() string  { return "fake" }
func (p *fakeProvider) Model() string { return "fake-model" }

func (p *fakeProvider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := len(p.requests)
	req.History = append([]providers.Message(nil), req.History...)
	p.requests = append(p.requests, req)
	var items []item
	switch {
	case i < len(p.responses):
		items = p.responses[i]
	case p.more != nil:
		items = p.more(i)
	default:
		return nil, &providers.Error{Provider: "fake", Kind: providers.ErrScriptExhausted}
	}
	return &fakeStream{ctx: ctx, items: items}, nil
}

func (p *fakeProvider) Requests() []providers.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providers.Request(nil), p.requests...)
}

type fakeStream struct {
	ctx   context.Context
	items []item
}

func (s *fakeStream) Next() (providers.Event, error) {
	for len(s.items) > 0 {
		it := s.items[0]
		s.items = s.items[1:]
		if it.wait != nil {
			select {
			case <-it.wait:
			case <-s.ctx.Done():
				return providers.Event{}, s.ctx.Err()
			case <-time.After(bound):
				return providers.Event{}, errors.New("fake provider: gave up waiting")
			}
			continue
		}
		return it.ev, it.err
	}
	return providers.Event{}, io.EOF
}

func (s *fakeStream) Close() error { return nil }

// fakeTool is a tool whose behaviour is a function.
type fakeTool struct {
	name string
	fn   func(ctx context.Context, id string, args json.RawMessage) toolset.Result
}

func (t *fakeTool) Spec() toolset.Spec {
	return toolset.Spec{Name: t.name, Description: "fake " + t.name, Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (t *fakeTool) Call(ctx context.Context, id string, args json.RawMessage) toolset.Result {
	return t.fn(ctx, id, args)
}

func newToolset(t testing.TB, tools ...toolset.Tool) *toolset.Toolset {
	t.Helper()
	ts := toolset.New(nil)
	for _, tool := range tools {
		if err := ts.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// recorder records events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Observe(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

var tinyRetry = providers.RetryPolicy{Attempts: 3, Initial: time.Millisecond, Max: 2 * time.Millisecond}

func newLoop(t testing.TB, p providers.ChatProvider, ts Toolset, mod func(*Config)) (*Loop, *recorder) {
	t.Helper()
	rec := &recorder{}
	policy := tinyRetry
	cfg := Config{Provider: p, Toolset: ts, System: "sys", Observer: rec, Retry: &policy}
	if mod != nil {
		mod(&cfg)
	}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l, rec
}

// recv waits for a value, failing the test after bound.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(bound):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func truncatedCall(id, name, args string) item {
	return item{ev: providers.Event{Kind: providers.EventToolCall, ToolCall: &providers.ToolCall{ID: id, Name: name, Arguments: args, Truncated: true}}}
}
func stop(r providers.StopReason) item {
	return item{ev: providers.Event{Kind: providers.EventStop, Stop: r}}
}

// checkPairs fails the test unless every tool call of history has exactly
// one tool message, right after its assistant message, and every tool
// message answers a call: the shape every provider accepts.
func checkPairs(t *testing.T, h []providers.Message) {
	t.Helper()
	for i := 0; i < len(h); i++ {
		m := h[i]
		switch m.Role {
		case providers.RoleTool:
			t.Fatalf("message %d: tool message %s answers no call", i, m.ToolCallID)
		case providers.RoleAssistant:
			want := map[string]int{}
			for _, tc := range m.ToolCalls {
				want[tc.ID]++
			}
			j := i + 1
			for ; j < len(h) && h[j].Role == providers.RoleTool; j++ {
				want[h[j].ToolCallID]--
			}
			for id, n := range want {
				if n != 0 {
					t.Fatalf("message %d: call %s has %d results, want 1", i, id, 1-n)
				}
			}
			i = j - 1
		}
	}
}
