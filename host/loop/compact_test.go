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
		name         string
		tokens, size int64
		want         bool
	}{
		{"empty context", 0, 1000, false},
		{"unknown window: never", 900, 0, false},

		// 8k: reserve 1,562 (50,000 of 262,144 scaled), threshold 6,630 (81 %).
		{"8k, one short message", 10, 8_192, false},
		{"8k, half full", 4_096, 8_192, false},
		{"8k, just under the threshold", 6_629, 8_192, false},
		{"8k, at the threshold", 6_630, 8_192, true},
		{"8k, full", 8_192, 8_192, true},

		// 32k: reserve 6,250, threshold 26,518.
		{"32k, half full", 16_384, 32_768, false},
		{"32k, just under the threshold", 26_517, 32_768, false},
		{"32k, at the threshold", 26_518, 32_768, true},

		// 128k: reserve 25,000, threshold 106,072.
		{"128k, 78k (within 50,000 of the end, not of its reserve)", 78_000, 131_072, false},
		{"128k, just under the threshold", 106_071, 131_072, false},
		{"128k, at the threshold", 106_072, 131_072, true},

		// Kimi's own window: reserve 50,000, threshold 212,144, as in Kimi.
		{"256k, just under the threshold", 212_143, 262_144, false},
		{"256k, at the threshold", 212_144, 262_144, true},

		// 1M: reserve 50,000 (950,000), 85 % comes first.
		{"1M, just under 85 %", 849_999, 1_000_000, false},
		{"1M, at 85 %", 850_000, 1_000_000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := needsCompaction(tt.tokens, tt.size); got != tt.want {
				t.Errorf("needsCompaction(%d, %d) = %v, want %v (threshold %d)", tt.tokens, tt.size, got, tt.want, compactThreshold(tt.size))
			}
		})
	}
}

// TestCompactThresholdIsNearlyFull: every window compacts only when at least
// 80 % full and leaves at least 15 % of it free.
func TestCompactThresholdIsNearlyFull(t *testing.T) {
	for _, size := range []int64{1_000, 4_096, 8_192, 16_384, 32_768, 65_536, 131_072, 200_000, 262_144, 1_000_000, 2_000_000} {
		th := compactThreshold(size)
		if share := float64(th) / float64(size); share < 0.80 || share > 0.85 {
			t.Errorf("window %d compacts at %d tokens (%.1f %%), want 80-85 %%", size, th, 100*share)
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
