package capability

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// TestApprovalIsBounded: a request over limits.ApprovalBytes reaches the
// decider with its description cut and the details that do not fit replaced
// by a note saying so.
func TestApprovalIsBounded(t *testing.T) {
	block := func(n int) pluginrpc.DisplayBlock {
		data, _ := json.Marshal(strings.Repeat("x", n))
		return pluginrpc.DisplayBlock{Kind: "brief", Data: data}
	}
	tests := []struct {
		name        string
		description string
		display     []pluginrpc.DisplayBlock
		blocks      int    // blocks kept whole
		note        string // the note replacing the rest, "" for none
	}{
		{"within the limit", "Edit", []pluginrpc.DisplayBlock{block(3 << 20)}, 1, ""},
		{"one block over the limit", "Edit", []pluginrpc.DisplayBlock{block(6 << 20)}, 0,
			"[6.0 MiB of details left out: plugin p asked with more than the 4 MiB an approval request may show]"},
		{"the blocks that fit are kept, in order", "Edit", []pluginrpc.DisplayBlock{block(1 << 20), block(4 << 20), block(10)}, 1,
			"[4.0 MiB of details left out: plugin p asked with more than the 4 MiB an approval request may show]"},
		{"a long description is cut", strings.Repeat("d", 5<<20), nil, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got approval.Request
			h := &Host{Plugin: "p", Calls: calls{"c1": "Edit"}, Declared: map[string][]string{"Edit": {pluginrpc.CapApproval}},
				Decider: approval.DeciderFunc(func(_ context.Context, r approval.Request) (approval.Decision, error) {
					got = r
					return approval.Decision{Approved: true}, nil
				})}
			if _, err := h.RequestApproval(context.Background(), pluginrpc.ApprovalRequest{ToolCallID: "c1", Description: tt.description,
				Display: tt.display}); err != nil {
				t.Fatal(err)
			}
			size := len(got.Description)
			for _, d := range got.Display {
				size += len(d.Kind) + len(d.Data)
			}
			if size > limits.ApprovalBytes+1000 {
				t.Fatalf("the decider saw %d bytes", size)
			}
			if n := utf8.RuneCountInString(got.Description); n > limits.ResultChars {
				t.Fatalf("a description of %d characters", n)
			}
			want := tt.blocks
			if tt.note != "" {
				want++
			}
			if len(got.Display) != want {
				t.Fatalf("%d blocks, want %d", len(got.Display), want)
			}
			for i := range tt.blocks {
				if string(got.Display[i].Data) != string(tt.display[i].Data) {
					t.Fatalf("block %d changed", i)
				}
			}
			if tt.note != "" {
				var note string
				if last := got.Display[len(got.Display)-1]; last.Kind != "brief" || json.Unmarshal(last.Data, &note) != nil || note != tt.note {
					t.Fatalf("note %q, want %q", note, tt.note)
				}
			}
		})
	}
}

// TestProgressIsCoalesced: within an interval, reports are held, each
// replacing the one before; the last is passed on when the sink is
// unregistered, before unregister returns, and nothing after. Every report
// keeps the call alive at once.
func TestProgressIsCoalesced(t *testing.T) {
	sinks := &ProgressSinks{interval: time.Hour}
	var mu sync.Mutex
	var got []ProgressReport
	alive := 0
	unregister := sinks.Register("c1", func() { alive++ }, func(r ProgressReport) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
	})
	h := &Host{Plugin: "p", Progress: sinks, Calls: calls{"c1": "Index"}, Declared: map[string][]string{"Index": {pluginrpc.CapProgress}}}
	for i := range 10_000 {
		if err := h.ReportProgress(context.Background(), pluginrpc.ProgressReport{ToolCallID: "c1", Progress: float64(i + 1),
			Total: 10_000, Message: strings.Repeat("m", 10_000)}); err != nil {
			t.Fatal(err)
		}
	}
	unregister()
	_ = h.ReportProgress(context.Background(), pluginrpc.ProgressReport{ToolCallID: "c1", Progress: 1})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].Progress != 1 || got[1].Progress != 10_000 {
		t.Fatalf("passed on %d reports: %v", len(got), got)
	}
	if alive != 10_000 {
		t.Fatalf("%d reports restarted the call's timeout, want every one of 10000", alive)
	}
	for _, r := range got {
		if n := utf8.RuneCountInString(r.Message); n != limits.ProgressMessageChars || !strings.HasSuffix(r.Message, limits.TruncatedMarker) {
			t.Fatalf("a message of %d characters", n)
		}
	}
}

// TestProgressHeldReportArrives: a held report is passed on when the
// interval ends, without waiting for the call to end; reports arrive in
// order.
func TestProgressHeldReportArrives(t *testing.T) {
	sinks := &ProgressSinks{interval: 50 * time.Millisecond}
	arrived := make(chan ProgressReport, 3)
	unregister := sinks.Register("c1", nil, func(r ProgressReport) { arrived <- r })
	defer unregister()
	for i := range 3 {
		sinks.deliver(ProgressReport{ToolCallID: "c1", Progress: float64(i + 1)})
	}
	for last := 0.0; last != 3; {
		select {
		case r := <-arrived:
			if r.Progress <= last {
				t.Fatalf("report %v after %v", r.Progress, last)
			}
			last = r.Progress
		case <-time.After(bound):
			t.Fatalf("the last report never arrived (the last seen: %v)", last)
		}
	}
}

// bound guards against a hang; it is never how long a test waits on purpose.
const bound = 30 * time.Second
