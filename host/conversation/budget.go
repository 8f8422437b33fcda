package conversation

import (
	"fmt"
	"math"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/providers/config"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// CheckLimits refuses limits that bound nothing: a negative or not-a-number
// value is an error naming its flag (the server API's keys are the same
// words: max_turns, max_tokens, max_budget_usd).
func CheckLimits(l loop.Limits) error {
	switch {
	case l.MaxTurns < 0:
		return fmt.Errorf("invalid --max-turns %d: it must be 0 (no limit) or more", l.MaxTurns)
	case l.MaxTokens < 0:
		return fmt.Errorf("invalid --max-tokens %d: it must be 0 (no limit) or more", l.MaxTokens)
	case l.MaxBudgetUSD < 0 || math.IsNaN(l.MaxBudgetUSD) || math.IsInf(l.MaxBudgetUSD, 0):
		return fmt.Errorf("invalid --max-budget-usd %v: it must be a number of US dollars, 0 (no limit) or more", l.MaxBudgetUSD)
	}
	return nil
}

// needPrices: a budget in dollars needs the prices of the model sel
// chose; the error names the model and the configuration key to set.
func needPrices(l loop.Limits, sel *registry.Selection) error {
	if err := CheckLimits(l); err != nil {
		return err
	}
	if l.MaxBudgetUSD <= 0 || sel.Prices != nil {
		return nil
	}
	model := sel.Provider.Model()
	key := "prices." + model + " (or a model alias's prices)"
	if sel.Alias != "" {
		key = "models." + sel.Alias + ".prices"
	}
	file := sel.ConfigPath
	if file == "" {
		file = "the configuration file"
	}
	return fmt.Errorf("--max-budget-usd needs the prices of model %s: set %s in %s", model, key, file)
}

// budgetOf is the loop configuration with the run's budget and the
// model's prices.
func (asm *assembly) budgetOf(cfg loop.Config, prices *config.Prices) loop.Config {
	cfg.Budget, cfg.Prices = asm.budget, prices
	return cfg
}

// Spent is what the conversation's run spent so far: every turn since
// Open, /clear and /model included (the run's budget counts it).
func (c *Conversation) Spent() loop.Spent {
	if c.asm == nil {
		return loop.Spent{}
	}
	return c.asm.budget.Spent()
}

// Limits are the run's limits (Config.Limits).
func (c *Conversation) Limits() loop.Limits {
	if c.asm == nil {
		return loop.Limits{}
	}
	return c.asm.budget.Limits()
}

// addTotals adds the turn res to the session's totals (`kosong-host
// sessions` shows them).
func addTotals(sess *session.Session, res loop.TurnResult) error {
	if sess == nil || (res.Steps == 0 && res.Usage.Total() == 0) {
		return nil
	}
	return sess.AddTotals(res.Usage, res.Steps, res.CostUSD, res.Priced)
}
