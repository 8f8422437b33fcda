package temporalengine

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// sink records the batches a feedWriter sends.
type sink struct {
	mu      sync.Mutex
	batches [][]FeedEvent
	sent    chan struct{}
	err     error
}

func newSink() *sink { return &sink{sent: make(chan struct{}, 100)} }

func (s *sink) send(_ context.Context, b []FeedEvent) error {
	s.mu.Lock()
	s.batches = append(s.batches, b)
	s.mu.Unlock()
	s.sent <- struct{}{}
	return s.err
}

func (s *sink) got() [][]FeedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.batches
}

func (s *sink) waitSent(t *testing.T) {
	t.Helper()
	select {
	case <-s.sent:
	case <-time.After(30 * time.Second):
		t.Fatal("no batch was sent")
	}
}

func text(step int, s string) FeedEvent { return FeedEvent{Kind: FeedText, Step: step, Text: s} }

// TestFeedWriterJoinsDeltas: deltas of one kind and step queued together
// are one event; another kind or step starts a new one; close sends the
// rest as one batch, in order.
func TestFeedWriterJoinsDeltas(t *testing.T) {
	s := newSink()
	w := newFeedWriter(context.Background(), s.send, time.Hour, 1<<20)
	w.add(FeedEvent{Kind: FeedStep, Step: 1, Attempt: 1})
	for _, p := range []string{"one ", "two ", "three"} {
		w.add(text(1, p))
	}
	w.add(FeedEvent{Kind: FeedReasoning, Step: 1, Text: "hm"})
	w.add(text(1, "four"))
	w.add(text(2, "five"))
	w.close()
	want := [][]FeedEvent{{{Kind: FeedStep, Step: 1, Attempt: 1}, text(1, "one two three"),
		{Kind: FeedReasoning, Step: 1, Text: "hm"}, text(1, "four"), text(2, "five")}}
	if got := s.got(); !reflect.DeepEqual(got, want) {
		t.Fatalf("batches %+v, want %+v", got, want)
	}
}

// TestFeedWriterSendsOnTimeAndSize: a batch leaves after the interval
// without close, or at once when its text reaches the size; batches
// keep their order.
func TestFeedWriterSendsOnTimeAndSize(t *testing.T) {
	t.Run("interval", func(t *testing.T) {
		s := newSink()
		w := newFeedWriter(context.Background(), s.send, 10*time.Millisecond, 1<<20)
		defer w.close()
		w.add(text(1, "a"))
		s.waitSent(t)
		if got := s.got(); len(got) != 1 || got[0][0].Text != "a" {
			t.Fatalf("batches %+v", got)
		}
	})
	t.Run("size", func(t *testing.T) {
		s := newSink()
		w := newFeedWriter(context.Background(), s.send, time.Hour, 4)
		w.add(text(1, "abcd"))
		s.waitSent(t)
		w.add(text(1, "ef"))
		w.add(FeedEvent{Kind: FeedUsage, Step: 1})
		w.close()
		got := s.got()
		if len(got) != 2 || got[0][0].Text != "abcd" || got[1][0].Text != "ef" || got[1][1].Kind != FeedUsage {
			t.Fatalf("batches %+v", got)
		}
	})
}

// TestFeedWriterStopsOnError: a refused send (the feed ended) stops the
// writer; later events are dropped and close returns.
func TestFeedWriterStopsOnError(t *testing.T) {
	s := newSink()
	s.err = errors.New("workflow execution already completed")
	w := newFeedWriter(context.Background(), s.send, time.Hour, 1)
	w.add(text(1, "a"))
	s.waitSent(t)
	w.add(text(1, "b"))
	w.close()
	if got := s.got(); len(got) != 1 {
		t.Fatalf("%d batches sent, want 1 (none after the refusal)", len(got))
	}
	var nilWriter *feedWriter // a worker that does not publish
	nilWriter.add(text(1, "a"))
	nilWriter.close()
}

// TestFeedBounds: past FeedDeltaBatches a feed's batches lose their
// deltas (one FeedDropped says so), past FeedMaxBatches nothing is sent.
func TestFeedBounds(t *testing.T) {
	call := FeedEvent{Kind: FeedToolCall, Step: 3, Call: &providers.ToolCall{ID: "c", Name: "Noop"}}
	tests := []struct {
		name    string
		batches int
		dropped bool
		in      []FeedEvent
		want    []FeedEvent
	}{
		{"under the delta bound", FeedDeltaBatches - 1, false, []FeedEvent{text(3, "a"), call}, []FeedEvent{text(3, "a"), call}},
		{"at the delta bound", FeedDeltaBatches, false, []FeedEvent{text(3, "a"), text(4, "b"), call},
			[]FeedEvent{{Kind: FeedDropped, Step: 3}, call}},
		{"deltas already dropped", FeedDeltaBatches + 5, true, []FeedEvent{text(3, "a"), call}, []FeedEvent{call}},
		{"only deltas past the bound", FeedDeltaBatches + 5, true, []FeedEvent{text(3, "a")}, []FeedEvent{}},
		{"at the hard bound", FeedMaxBatches, true, []FeedEvent{call}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fc := &feedCount{batches: tt.batches, dropped: tt.dropped}
			if got := bound(fc, tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("bound: %+v, want %+v", got, tt.want)
			}
			if !fc.dropped && tt.batches >= FeedDeltaBatches {
				t.Error("the drop was not remembered")
			}
		})
	}
	// The publisher counts what it lets through, per feed.
	p := newPublisher(nil, "q")
	for range FeedMaxBatches {
		if p.admit("f", []FeedEvent{call}) == nil {
			t.Fatal("a batch under the bound was refused")
		}
	}
	if p.admit("f", []FeedEvent{call}) != nil || p.admit("g", []FeedEvent{call}) == nil {
		t.Fatal("the hard bound is not per feed")
	}
}

// TestCursor: cursors print and parse; bad ones are refused naming them.
func TestCursor(t *testing.T) {
	tests := []struct {
		in   string
		want Cursor
		err  bool
	}{
		{"0.0", Cursor{}, false},
		{"17.3", Cursor{Event: 17, Index: 3}, false},
		{"17", Cursor{}, true},
		{"a.1", Cursor{}, true},
		{"-1.0", Cursor{}, true},
	}
	for _, tt := range tests {
		got, err := ParseCursor(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseCursor(%q) = %v, %v", tt.in, got, err)
		}
		if err != nil && !strings.Contains(err.Error(), tt.in) {
			t.Errorf("the error %q does not name %q", err, tt.in)
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("%v prints as %q", got, got.String())
		}
	}
	if !(Cursor{5, 0}).after(Cursor{4, 9}) || (Cursor{4, 9}).after(Cursor{4, 9}) || !(Cursor{4, 10}).after(Cursor{4, 9}) {
		t.Error("cursor order")
	}
}

// TestLoopEvents: feed events map onto the loop's, which the front ends
// render.
func TestLoopEvents(t *testing.T) {
	call := providers.ToolCall{ID: "c1", Name: "Noop", Arguments: "{}"}
	u := providers.Usage{InputTokens: 3, OutputTokens: 4}
	tests := []struct {
		in   FeedEvent
		want []loop.Event
	}{
		{FeedEvent{Kind: FeedStep, Step: 2, Attempt: 1}, []loop.Event{loop.StepStarted{Step: 2, Attempt: 1}}},
		{text(2, "hi"), []loop.Event{loop.TextDelta{Step: 2, Text: "hi"}}},
		{FeedEvent{Kind: FeedReasoning, Step: 2, Text: "hm"}, []loop.Event{loop.ReasoningDelta{Step: 2, Text: "hm"}}},
		{FeedEvent{Kind: FeedToolCall, Step: 2, Call: &call}, []loop.Event{loop.ToolCallStarted{Step: 2, Call: call}}},
		{FeedEvent{Kind: FeedToolResult, Step: 2, Call: &call, Result: &FeedResult{Kind: toolset.Ok, Output: "ok", Duration: time.Second}},
			[]loop.Event{loop.ToolCallFinished{Step: 2, Call: call, Duration: time.Second,
				Result: toolset.Result{ToolCallID: "c1", Kind: toolset.Ok, Output: []providers.ContentPart{providers.TextPart("ok")}}}}},
		{FeedEvent{Kind: FeedUsage, Step: 2, Usage: &u}, []loop.Event{loop.UsageReported{Step: 2, Usage: u}}},
		{FeedEvent{Kind: FeedStop, Step: 2, Stop: providers.StopEnd}, []loop.Event{loop.ResponseStopped{Step: 2, Reason: providers.StopEnd}}},
		{FeedEvent{Kind: FeedEnd, Outcome: &TurnOutcome{Steps: 2, Reason: loop.StopDone, Usage: u}},
			[]loop.Event{loop.TurnEnded{Steps: 2, Reason: loop.StopDone, Usage: u}}},
		{FeedEvent{Kind: FeedDropped}, nil},
		{FeedEvent{Kind: FeedApproval}, nil},
	}
	for _, tt := range tests {
		if got := LoopEvents(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("LoopEvents(%s) = %#v, want %#v", tt.in.Kind, got, tt.want)
		}
	}
	evs := LoopEvents(FeedEvent{Kind: FeedEnd, Outcome: &TurnOutcome{Reason: loop.StopError, Error: "boom"}})
	if len(evs) != 2 || evs[0].(loop.TurnFailed).Err.Error() != "boom" || evs[1].(loop.TurnEnded).Err.Error() != "boom" {
		t.Errorf("a failed turn's end: %#v", evs)
	}
}

// TestFeedWorkflowEnds: a feed ends on its turn's end, or after its
// idle time without a signal (in workflow time), counting its batches.
func TestFeedWorkflowEnds(t *testing.T) {
	tests := []struct {
		name string
		end  bool
		want int
	}{
		{"the turn's end", true, 2},
		{"idle", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(FeedWorkflow, workflow.RegisterOptions{Name: WorkflowFeed})
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalFeedEvents, []FeedEvent{text(1, "a")}) }, time.Minute)
			// A signal after an hour keeps the feed open past its first idle hour.
			env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalFeedEvents, []FeedEvent{text(1, "b")}) }, 90*time.Minute)
			if tt.end {
				env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalFeedEnd, TurnOutcome{Steps: 1}) }, 2*time.Hour)
			}
			start := env.Now()
			env.ExecuteWorkflow(WorkflowFeed, FeedInput{Idle: time.Hour})
			if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
				t.Fatalf("the feed did not end: %v", env.GetWorkflowError())
			}
			var n int
			if err := env.GetWorkflowResult(&n); err != nil || n != tt.want {
				t.Fatalf("%d batches (%v), want %d", n, err, tt.want)
			}
			took := env.Now().Sub(start)
			if tt.end && took != 2*time.Hour || !tt.end && (took < 150*time.Minute || took > 4*time.Hour) {
				t.Errorf("the feed ended after %s", took)
			}
		})
	}
}
