package temporalengine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.temporal.io/sdk/client"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/temporalengine/temporaltest"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// toolProvider calls Noop when the last message is the user's and
// answers "done" after the tool's result: a turn of two steps.
type toolProvider struct{}

func (toolProvider) Name() string  { return "fake" }
func (toolProvider) Model() string { return "fake" }
func (toolProvider) Stream(_ context.Context, req providers.Request) (providers.Stream, error) {
	last := req.History[len(req.History)-1]
	if last.Role == providers.RoleUser {
		return &events{evs: []providers.Event{{Kind: providers.EventToolCall,
			ToolCall: &providers.ToolCall{ID: fmt.Sprint("call_", len(req.History)), Name: "Noop", Arguments: "{}"}}}}, nil
	}
	return &events{evs: []providers.Event{{Kind: providers.EventText, Text: "done"}}}, nil
}

type events struct{ evs []providers.Event }

func (e *events) Next() (providers.Event, error) {
	if len(e.evs) == 0 {
		return providers.Event{}, io.EOF
	}
	ev := e.evs[0]
	e.evs = e.evs[1:]
	return ev, nil
}
func (e *events) Close() error { return nil }

type noop struct{}

func (noop) Spec() toolset.Spec {
	return toolset.Spec{Name: "Noop", Description: "Does nothing.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (noop) Call(context.Context, string, json.RawMessage) toolset.Result {
	return toolset.Result{Kind: toolset.Ok, Output: []providers.ContentPart{providers.TextPart("ok")}}
}

// hosted is a worker's conversation of the fake model and the Noop tool.
type hosted struct{ ts *toolset.Toolset }

// startTestWorker runs a worker of acts on the task queue "q" until the
// test ends.
func startTestWorker(t testing.TB, c client.Client, acts *Activities) {
	t.Helper()
	w := NewWorker(c, "q", acts)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); acts.Close() })
}

func newHosted(t testing.TB) *hosted {
	ts := toolset.New(hclog.NewNullLogger())
	if err := ts.Add(noop{}); err != nil {
		t.Fatal(err)
	}
	return &hosted{ts: ts}
}

func (h *hosted) Provider() providers.ChatProvider { return toolProvider{} }
func (h *hosted) System() string                   { return "system" }
func (h *hosted) Toolset() *toolset.Toolset        { return h.ts }
func (h *hosted) Close()                           {}

// startEngine starts a dev server and a worker of the fake conversation.
func startEngine(t testing.TB) client.Client {
	srv := temporaltest.Start(t)
	c := srv.Dial(t)
	acts := NewActivities(func(context.Context, OpenRequest, approval.Asker) (Hosted, error) { return newHosted(t), nil })
	startTestWorker(t, c, acts)
	return c
}

// TestEngineTurns runs turns on the real dev server: the history is the
// in-process loop's, and a closed session ends its workflow.
func TestEngineTurns(t *testing.T) {
	c := startEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, c, "q", SessionInput{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	l, err := loop.New(loop.Config{Provider: toolProvider{}, Toolset: newHosted(t).ts, System: "system"})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"one", "two"} {
		res, err := s.Turn(ctx, in)
		if err != nil || res.Steps != 2 || res.Reason != loop.StopDone {
			t.Fatalf("turn %q: %+v, %v", in, res, err)
		}
		if _, err := l.Turn(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	got, want := s.History(), l.History()
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("history on Temporal:\n%s\nin process:\n%s", gb, wb)
	}
	s.Close()
	var res SessionResult
	if err := c.GetWorkflow(ctx, s.WorkflowID(), "").Get(ctx, &res); err != nil || res.Turns != 2 {
		t.Fatalf("the closed workflow: %+v, %v", res, err)
	}
	if _, err := s.Turn(ctx, "three"); err == nil {
		t.Error("a turn of a closed session did not fail")
	}
}

// BenchmarkStep measures a step (one model request, its one tool call)
// on Temporal against the in-process loop, with a model and a tool that
// take no time: what the engine itself costs per step.
func BenchmarkStep(b *testing.B) {
	const turns = 20
	c := startEngine(b)
	ctx := context.Background()
	l, err := loop.New(loop.Config{Provider: toolProvider{}, Toolset: newHosted(b).ts, System: "system"})
	if err != nil {
		b.Fatal(err)
	}
	s, err := Start(ctx, c, "q", SessionInput{WorkDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Turn(ctx, "warm up"); err != nil { // the worker session
		b.Fatal(err)
	}
	var inproc, temporal time.Duration
	for b.Loop() {
		start := time.Now()
		for range turns {
			if _, err := l.Turn(ctx, "go"); err != nil {
				b.Fatal(err)
			}
		}
		inproc += time.Since(start)
		start = time.Now()
		for range turns {
			if _, err := s.Turn(ctx, "go"); err != nil {
				b.Fatal(err)
			}
		}
		temporal += time.Since(start)
	}
	steps := float64(b.N * turns * 2)
	perIn, perT := float64(inproc.Microseconds())/steps/1000, float64(temporal.Microseconds())/steps/1000
	b.ReportMetric(perIn, "ms/step-inprocess")
	b.ReportMetric(perT, "ms/step-temporal")
	b.Logf("a step (model request + tool call): in-process %.3f ms, on Temporal %.1f ms (dev server, SQLite, one worker)", perIn, perT)
}

// TestEngineOpenFails: a worker that cannot open the session (its agent
// or provider is wrong) fails the turn with the reason, once.
func TestEngineOpenFails(t *testing.T) {
	srv := temporaltest.Start(t)
	c := srv.Dial(t)
	var opens atomic.Int64
	acts := NewActivities(func(context.Context, OpenRequest, approval.Asker) (Hosted, error) {
		opens.Add(1)
		return nil, fmt.Errorf("agent.yaml: no such plugin %q", "nope")
	})
	startTestWorker(t, c, acts)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, c, "q", SessionInput{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Turn(ctx, "hi")
	if err == nil || !strings.Contains(err.Error(), `opening the session on the worker: agent.yaml: no such plugin "nope"`) || res.Reason != loop.StopError {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	if n := opens.Load(); n != 1 {
		t.Errorf("opened %d times, want 1 (the failure is not retried)", n)
	}
}

// blocker is a tool that runs until its call is cancelled.
type blocker struct{ started, cancelled chan struct{} }

func (blocker) Spec() toolset.Spec {
	return toolset.Spec{Name: "Noop", Description: "Blocks.", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (b blocker) Call(ctx context.Context, _ string, _ json.RawMessage) toolset.Result {
	close(b.started)
	<-ctx.Done()
	close(b.cancelled)
	return toolset.Result{Kind: toolset.Failed, Message: "cancelled"}
}

// TestEngineInterrupt: an interrupted turn's Close cancels the workflow,
// and the running tool call is cancelled at its next heartbeat.
func TestEngineInterrupt(t *testing.T) {
	srv := temporaltest.Start(t)
	c := srv.Dial(t)
	b := blocker{started: make(chan struct{}), cancelled: make(chan struct{})}
	acts := NewActivities(func(context.Context, OpenRequest, approval.Asker) (Hosted, error) {
		ts := toolset.New(hclog.NewNullLogger())
		if err := ts.Add(b); err != nil {
			return nil, err
		}
		return &hosted{ts: ts}, nil
	})
	startTestWorker(t, c, acts)
	s, err := Start(context.Background(), c, "q", SessionInput{WorkDir: t.TempDir(), Heartbeat: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-b.started; cancel() }()
	if res, err := s.Turn(ctx, "hi"); err != context.Canceled || res.Reason != loop.StopCancelled {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	s.Close()
	select {
	case <-b.cancelled:
	case <-time.After(time.Minute):
		t.Fatal("the tool call was not cancelled")
	}
}
