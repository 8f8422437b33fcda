package conversation

import (
	"context"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// TestBudgetNeedsPrices: a budget in dollars opens only with a priced
// model, /model refuses an unpriced one (the model stays), and bad limits
// are refused naming the flag.
func TestBudgetNeedsPrices(t *testing.T) {
	cfg := setup(t, map[string]string{"config.yaml": "providers:\n  local:\n    type: openai-compatible\n    base_url: http://127.0.0.1:1\n    api_key: k\n" +
		"models:\n  p:\n    provider: local\n    model: priced\n    prices: {input: 1, output: 2}\n  u:\n    provider: local\n    model: unpriced\n"})
	cfg.Provider = registry.Options{Model: "p"}
	tests := []struct {
		name   string
		model  string
		limits loop.Limits
		want   string // "" opens
	}{
		{name: "priced", model: "p", limits: loop.Limits{MaxBudgetUSD: 1}},
		{name: "unpriced", model: "u", limits: loop.Limits{MaxBudgetUSD: 1}, want: "--max-budget-usd needs the prices of model unpriced: set models.u.prices in "},
		{name: "unpriced without a budget", model: "u", limits: loop.Limits{MaxTurns: 2}},
		{name: "negative turns", model: "p", limits: loop.Limits{MaxTurns: -1}, want: "invalid --max-turns -1"},
		{name: "negative tokens", model: "p", limits: loop.Limits{MaxTokens: -1}, want: "invalid --max-tokens -1"},
		{name: "negative budget", model: "p", limits: loop.Limits{MaxBudgetUSD: -2}, want: "invalid --max-budget-usd -2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cfg
			c.Provider.Model, c.Limits = tt.model, tt.limits
			conv, err := Open(context.Background(), c)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conv.Close()
			if conv.Limits() != tt.limits {
				t.Fatalf("limits %+v", conv.Limits())
			}
		})
	}
	c := cfg
	c.Limits = loop.Limits{MaxBudgetUSD: 1}
	conv, err := Open(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	if err := conv.SetModel(context.Background(), "u"); err == nil || !strings.Contains(err.Error(), "models.u.prices") {
		t.Fatalf("SetModel to an unpriced model: %v", err)
	}
	if conv.Provider().Model() != "priced" {
		t.Fatalf("the model changed to %s", conv.Provider().Model())
	}
}
