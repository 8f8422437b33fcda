package loop

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func TestNeedsCompaction(t *testing.T) {
	tests := []struct {
		tokens, size int64
		want         bool
	}{
		{0, 1000, false},
		{900, 0, false},             // unknown window: never
		{849_999, 1_000_000, false}, // below 85 %, far from the end
		{850_000, 1_000_000, true},  // 85 %
		{10, 40_000, true},          // a window smaller than the reserve
		{100_000, 200_000, false},   // half, and 100k from the end
		{150_001, 200_000, true},    // within 50k of the end
	}
	for _, tt := range tests {
		if got := needsCompaction(tt.tokens, tt.size); got != tt.want {
			t.Errorf("needsCompaction(%d, %d) = %v", tt.tokens, tt.size, got)
		}
	}
}

func TestCompactionCut(t *testing.T) {
	u := providers.Message{Role: providers.RoleUser}
	a := providers.Message{Role: providers.RoleAssistant}
	tool := providers.Message{Role: providers.RoleTool}
	tests := []struct {
		name    string
		history []providers.Message
		want    int
	}{
		{"too short", []providers.Message{u, a}, 0},
		{"keeps the last user and assistant", []providers.Message{u, a, u, a}, 2},
		{"an assistant keeps its tool messages", []providers.Message{u, a, tool, u, a, tool, tool}, 3},
		{"mid-turn", []providers.Message{u, a, u, a, tool}, 2},
	}
	for _, tt := range tests {
		if got := compactionCut(tt.history); got != tt.want {
			t.Errorf("%s: cut %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestTurnCompacts: a response reporting a context near the window makes
// the next step start from a summary of the history.
func TestTurnCompacts(t *testing.T) {
	p := &fakeProvider{responses: [][]item{
		{toolCall("c1", "Read", `{}`), usage(880, 20)},
		{text("SUMMARY: the user wants x; file a.go read.")},
		{text("done")},
	}}
	read := &fakeTool{name: "Read", fn: func(context.Context, string, json.RawMessage) toolset.Result {
		return toolset.Result{Output: []providers.ContentPart{providers.TextPart("contents")}}
	}}
	l, rec := newLoop(t, p, newToolset(t, read), func(c *Config) {
		c.MaxContextSize = 1000
		c.History = []providers.Message{
			{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("earlier question")}},
			{Role: providers.RoleAssistant, Content: []providers.ContentPart{providers.TextPart("earlier answer")}},
		}
	})
	if _, err := l.Turn(context.Background(), "now do x"); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 3 || reqs[1].System != compactSystem || !strings.Contains(reqs[1].History[len(reqs[1].History)-1].Text(), "Summarise the conversation") {
		t.Fatalf("requests: %d, second system %q", len(reqs), reqs[1].System)
	}
	// The summary replaced everything before the last user message and the
	// assistant's tool call (with its tool message).
	h := reqs[2].History
	if len(h) != 4 || h[0].Text() != SummaryPrefix+"SUMMARY: the user wants x; file a.go read." ||
		h[1].Text() != "now do x" || h[2].ToolCalls[0].ID != "c1" || h[3].ToolCallID != "c1" {
		t.Fatalf("history after compaction: %+v", h)
	}
	var compacted []Compacted
	for _, e := range rec.Events() {
		if c, ok := e.(Compacted); ok {
			compacted = append(compacted, c)
		}
	}
	if len(compacted) != 1 || compacted[0].Tokens != 900 || compacted[0].Summarised != 2 || compacted[0].Kept != 3 || compacted[0].Err != nil {
		t.Fatalf("compaction events %+v", compacted)
	}
}

// TestFailedCompactionKeepsHistory: an empty summary leaves the history
// whole and the turn goes on.
func TestFailedCompactionKeepsHistory(t *testing.T) {
	p := &fakeProvider{responses: [][]item{
		{toolCall("c1", "Read", `{}`), usage(990, 5)},
		{}, // the summary: nothing
		{text("done")},
	}}
	read := &fakeTool{name: "Read", fn: func(context.Context, string, json.RawMessage) toolset.Result { return toolset.Result{} }}
	l, rec := newLoop(t, p, newToolset(t, read), func(c *Config) {
		c.MaxContextSize = 1000
		c.History = []providers.Message{
			{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("q")}},
			{Role: providers.RoleAssistant, Content: []providers.ContentPart{providers.TextPart("a")}},
		}
	})
	if _, err := l.Turn(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if h := p.Requests()[2].History; len(h) != 5 || h[0].Text() != "q" {
		t.Fatalf("history: %+v", h)
	}
	var failed bool
	for _, e := range rec.Events() {
		if c, ok := e.(Compacted); ok && c.Err != nil && strings.Contains(c.String(), "the full history is kept: the model gave an empty summary") {
			failed = true
		}
	}
	if !failed {
		t.Fatal("no failed compaction event")
	}
}
