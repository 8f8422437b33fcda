package loop

import (
	"context"
	"encoding/json"
	"math"
	"sync/atomic"
	"testing"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/config"
)

// TestBudgetStopsTheTurn: a run stops before the step that would go over
// a limit, the finished tool results kept in the history, with the
// limit's reason; a turn that answers within the limit is done; a run
// already at its limit stops its next turn before any model request.
func TestBudgetStopsTheTurn(t *testing.T) {
	// Every response calls Count and reports 100 in, 10 out: 110 tokens,
	// at $1 / $10 per million tokens $0.0002.
	callStep := func(i int) []item {
		id := "c" + string(rune('1'+i))
		return []item{text("counting"), toolCall(id, "Count", `{"n":"`+id+`"}`), usage(100, 10)}
	}
	prices := &config.Prices{Input: 1, Output: 10, CachedInput: 1}
	tests := []struct {
		name       string
		limits     Limits
		prices     *config.Prices
		more       func(i int) []item
		wantReason StopReason
		wantSteps  int
		wantCalls  int32
	}{
		{name: "max turns", limits: Limits{MaxTurns: 2}, more: callStep, wantReason: StopMaxTurns, wantSteps: 2, wantCalls: 2},
		{name: "max tokens", limits: Limits{MaxTokens: 300}, more: callStep, wantReason: StopMaxTokens, wantSteps: 3, wantCalls: 3},
		{name: "max budget", limits: Limits{MaxBudgetUSD: 0.0004}, prices: prices, more: callStep, wantReason: StopMaxBudget, wantSteps: 2, wantCalls: 2},
		{name: "answer at the last turn is done", limits: Limits{MaxTurns: 2}, more: func(i int) []item {
			if i == 1 {
				return []item{text("done"), usage(100, 10)}
			}
			return callStep(i)
		}, wantReason: StopDone, wantSteps: 2, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			ts := newToolset(t, &fakeTool{name: "Count", fn: func(context.Context, string, json.RawMessage) toolset.Result {
				calls.Add(1)
				return toolset.Result{Output: []providers.ContentPart{providers.TextPart("counted")}}
			}})
			budget := NewBudget(tt.limits)
			prov := &fakeProvider{more: tt.more}
			l, rec := newLoop(t, prov, ts, func(c *Config) { c.Budget, c.Prices = budget, tt.prices })
			res, err := l.Turn(context.Background(), "go")
			if err != nil || res.Reason != tt.wantReason || res.Steps != tt.wantSteps || calls.Load() != tt.wantCalls {
				t.Fatalf("res %+v err %v calls %d; want reason %s, %d steps, %d calls", res, err, calls.Load(), tt.wantReason, tt.wantSteps, tt.wantCalls)
			}
			h := l.History()
			checkPairs(t, h)
			if last := h[len(h)-1]; tt.wantReason.AtLimit() && (last.Role != providers.RoleTool || last.Content[0].Text != "counted") {
				t.Fatalf("the last call's result is not kept: %+v", last)
			}
			var reached []LimitReached
			for _, e := range rec.Events() {
				if r, ok := e.(LimitReached); ok {
					reached = append(reached, r)
				}
			}
			if tt.wantReason.AtLimit() != (len(reached) == 1) || (len(reached) == 1 && (reached[0].Reason != tt.wantReason || reached[0].Text == "")) {
				t.Fatalf("LimitReached events %+v", reached)
			}
			if tt.prices != nil && (!res.Priced || math.Abs(res.CostUSD-float64(tt.wantSteps)*0.0002) > 1e-12) {
				t.Fatalf("cost %v priced %v", res.CostUSD, res.Priced)
			}
			if spent := budget.Spent(); spent.Turns != tt.wantSteps || spent.Usage.Total() != int64(110*tt.wantSteps) {
				t.Fatalf("spent %+v", spent)
			}
			if !tt.wantReason.AtLimit() {
				return
			}
			asked := len(prov.Requests())
			res, err = l.Turn(context.Background(), "more")
			if err != nil || res.Reason != tt.wantReason || res.Steps != 0 || len(prov.Requests()) != asked {
				t.Fatalf("next turn: res %+v err %v, %d requests (before: %d)", res, err, len(prov.Requests()), asked)
			}
		})
	}
}

// TestPricesCost: cached input tokens cost cached_input, the rest input.
func TestPricesCost(t *testing.T) {
	p := config.Prices{Input: 3, Output: 15, CachedInput: 0.3}
	got := p.Cost(providers.Usage{InputTokens: 1_000_000, CacheReadTokens: 400_000, OutputTokens: 100_000})
	if want := 0.6*3 + 0.4*0.3 + 0.1*15; math.Abs(got-want) > 1e-9 {
		t.Fatalf("cost %v, want %v", got, want)
	}
}

// TestSubagentBudget: a subagent's responses are not the run's turns, its
// tokens are.
func TestSubagentBudget(t *testing.T) {
	b := NewBudget(Limits{MaxTurns: 1, MaxTokens: 100})
	sub := b.Subagent()
	sub.countTurn()
	if r, _ := b.reached(); r != "" {
		t.Fatalf("a subagent's turn reached %s", r)
	}
	sub.add(providers.Usage{InputTokens: 100}, 0)
	if r, _ := b.reached(); r != StopMaxTokens {
		t.Fatalf("reached %q, want %s", r, StopMaxTokens)
	}
	var none *Budget
	none.add(providers.Usage{InputTokens: 1}, 1)
	if r, _ := none.reached(); r != "" || none.Subagent() != nil {
		t.Fatal("a nil budget stops")
	}
}
