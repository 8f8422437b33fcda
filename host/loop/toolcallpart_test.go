package loop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// A model streaming a call in thousands of tiny fragments makes at most
// one event per PartInterval (plus the rest at the end); the events
// concatenate to the arguments.
func TestPartBufferBoundsTheRate(t *testing.T) {
	tests := []struct {
		name      string
		fragments int
		every     time.Duration
		maxEvents int
	}{
		{"5000 fragments, 1 ms apart", 5000, time.Millisecond, 1 + 5000/50 + 1},
		{"100 fragments, 100 ms apart", 100, 100 * time.Millisecond, 100},
		{"all at once", 3000, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Unix(1000, 0)
			b := newPartBuffer(3)
			b.now = func() time.Time { return now }
			var events []ToolCallPart
			var want strings.Builder
			for i := range tt.fragments {
				frag := string(rune('a' + i%26))
				want.WriteString(frag)
				if e, ok := b.add(providers.ToolCallPart{ID: "c1", Name: "WriteFile", Arguments: frag}); ok {
					events = append(events, e)
				}
				now = now.Add(tt.every)
			}
			if e, ok := b.flush("c1"); ok {
				events = append(events, e)
			}
			if len(events) > tt.maxEvents || len(events) == 0 {
				t.Fatalf("%d events, want 1..%d", len(events), tt.maxEvents)
			}
			var got strings.Builder
			for _, e := range events {
				if e.ToolCallID != "c1" || e.ToolName != "WriteFile" || e.Step != 3 {
					t.Errorf("event %+v", e)
				}
				got.WriteString(e.ArgumentsPart)
			}
			if got.String() != want.String() {
				t.Errorf("events concatenate to %d bytes, want %d", got.Len(), want.Len())
			}
			if events[0].ArgumentsPart != "a" {
				t.Errorf("first event %+v, want the first fragment at once", events[0])
			}
			if _, ok := b.flush("c1"); ok {
				t.Error("a second flush had something")
			}
		})
	}
}

// With a real provider on a fake OpenAI server streaming each call in
// small fragments: the calls' ToolCallPart events come in order, before
// their ToolCallStarted, and concatenate to the arguments; a call still
// reaches its tool as soon as it is complete, while the stream goes on.
func TestToolCallPartsFromAStreamingProvider(t *testing.T) {
	tool := newBlockingTool("Block", "call_a", "call_b")
	argsA := `{"path":"` + strings.Repeat("x", 200) + `"}`
	argsB := `{"path":"b"}`
	aStarted := make(chan struct{})
	gateTimedOut := make(chan struct{}, 1)
	go func() {
		if recv(t, tool.started, "tool start") == "call_a" {
			close(aStarted)
		}
		close(tool.release["call_a"])
		recv(t, tool.started, "tool start")
		close(tool.release["call_b"])
	}()
	gated := false
	srv := openaitest.NewServer(t, openaitest.Response{
		ToolCalls: []openaitest.ToolCall{{ID: "call_a", Name: "Block", Arguments: argsA}, {ID: "call_b", Name: "Block", Arguments: argsB}},
		Quirks:    openaitest.Quirks{SplitArguments: 2},
		// Once call_b begins, call_a is complete: the stream waits until
		// call_a runs.
		AfterChunk: func(ctx context.Context, _ int, data string) {
			if gated || !strings.Contains(data, `"call_b"`) {
				return
			}
			gated = true
			select {
			case <-aStarted:
			case <-ctx.Done():
			case <-time.After(bound):
				gateTimedOut <- struct{}{}
			}
		},
	}, openaitest.Response{Text: []string{"done"}})
	prov, err := openaicompat.New(openaicompat.Config{Name: "openai", BaseURL: srv.BaseURL(), APIKey: "k", Model: "m", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	l, rec := newLoop(t, prov, newToolset(t, tool), nil)
	if err := recv(t, runTurn(l, context.Background()), "turn"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gateTimedOut:
		t.Fatal("call_a did not reach its tool before the stream ended")
	default:
	}
	args := map[string]*strings.Builder{"call_a": {}, "call_b": {}}
	parts := map[string]int{}
	started := map[string]bool{}
	for _, e := range rec.Events() {
		switch e := e.(type) {
		case ToolCallPart:
			if started[e.ToolCallID] {
				t.Errorf("part %+v after its call started", e)
			}
			if e.ToolName != "Block" || e.Step != 1 || args[e.ToolCallID] == nil {
				t.Fatalf("part %+v", e)
			}
			args[e.ToolCallID].WriteString(e.ArgumentsPart)
			parts[e.ToolCallID]++
		case ToolCallStarted:
			started[e.Call.ID] = true
		}
	}
	if args["call_a"].String() != argsA || args["call_b"].String() != argsB {
		t.Errorf("parts concatenate to %q and %q", args["call_a"], args["call_b"])
	}
	// The first part goes out at once, the rest held within PartInterval
	// goes out when the call is complete: at least two, at most one a
	// fragment.
	if parts["call_a"] < 2 || parts["call_a"] > len(argsA)/2+1 {
		t.Errorf("%d parts for call_a (%d fragments)", parts["call_a"], len(argsA)/2)
	}
	if !started["call_a"] || !started["call_b"] {
		t.Errorf("started %v", started)
	}
}
