package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/scripted"
)

// blocking is a tool that runs until its call is cancelled.
type blocking struct{ started chan struct{} }

func (b *blocking) Spec() toolset.Spec {
	return toolset.Spec{Name: "Wait", Parameters: json.RawMessage(`{"type":"object"}`), Source: "test"}
}

func (b *blocking) Call(ctx context.Context, _ string, _ json.RawMessage) toolset.Result {
	close(b.started)
	<-ctx.Done()
	return toolset.RuntimeError(ctx.Err())
}

func TestTurnBusyCancelClose(t *testing.T) {
	sess, err := session.New(session.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ts := toolset.New(nil)
	tool := &blocking{started: make(chan struct{})}
	if err := ts.Add(tool); err != nil {
		t.Fatal(err)
	}
	provider := scripted.New([]scripted.Turn{{ToolCalls: []providers.ToolCall{{ID: "w1", Name: "Wait", Arguments: "{}"}}}})
	events := &Relay{}
	l, err := loop.New(loop.Config{Provider: provider, Toolset: ts, Observer: events})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	c := New(Parts{Session: sess, Loop: l, Toolset: ts, Events: events, Close: func() { closed = true }})
	var mu sync.Mutex
	var seen []string
	c.SetObserver(loop.ObserverFunc(func(e loop.Event) {
		mu.Lock()
		defer mu.Unlock()
		if te, ok := e.(loop.TurnEnded); ok {
			seen = append(seen, string(te.Reason))
		}
	}))
	if c.Cancel() {
		t.Fatal("Cancel with no turn running reported a turn")
	}
	<-c.Idle()

	type outcome struct {
		res loop.TurnResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := c.Turn(context.Background(), "wait for it")
		done <- outcome{res, err}
	}()
	<-tool.started
	if _, err := c.Turn(context.Background(), "again"); !errors.Is(err, ErrBusy) {
		t.Fatalf("second turn: %v, want ErrBusy", err)
	}
	if !c.Running() || !c.Cancel() {
		t.Fatal("the running turn was not cancelled")
	}
	select {
	case o := <-done:
		if o.res.Reason != loop.StopCancelled {
			t.Fatalf("turn %+v, %v", o.res, o.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled turn did not end")
	}
	<-c.Idle()
	history, err := session.LoadHistory(sess.HistoryPath())
	if err != nil || len(history) == 0 || history[0].Text() != "wait for it" {
		t.Fatalf("saved history %v, %v", history, err)
	}
	c.Close()
	if !closed {
		t.Fatal("Close did not stop the agent")
	}
	if _, err := c.Turn(context.Background(), "after close"); !errors.Is(err, ErrBusy) {
		t.Fatalf("turn after Close: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "cancelled" {
		t.Fatalf("turn events %v", seen)
	}
}

// TestSteer: Steer is refused with no turn running; during a turn the
// text is taken, and an interrupted turn gives it back in Unsteered.
func TestSteer(t *testing.T) {
	ts := toolset.New(nil)
	tool := &blocking{started: make(chan struct{})}
	if err := ts.Add(tool); err != nil {
		t.Fatal(err)
	}
	provider := scripted.New([]scripted.Turn{{ToolCalls: []providers.ToolCall{{ID: "w1", Name: "Wait", Arguments: "{}"}}}})
	l, err := loop.New(loop.Config{Provider: provider, Toolset: ts})
	if err != nil {
		t.Fatal(err)
	}
	c := New(Parts{Loop: l, Toolset: ts})
	if c.Steer("too early") {
		t.Fatal("Steer took a message with no turn running")
	}
	done := make(chan loop.TurnResult, 1)
	go func() {
		res, _ := c.Turn(context.Background(), "wait")
		done <- res
	}()
	<-tool.started
	if !c.Steer("look here too") {
		t.Fatal("Steer refused a message during the turn")
	}
	c.Cancel()
	select {
	case res := <-done:
		if len(res.Unsteered) != 1 || res.Unsteered[0] != "look here too" {
			t.Fatalf("Unsteered %q", res.Unsteered)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not end")
	}
}
