package loop

import (
	"fmt"
	"sync"

	"github.com/kosong-host/kosong-host/providers"
)

// The stop reasons of a turn stopped at a limit of its Budget: the turn
// ends cleanly, its finished steps and their tool results in the history.
const (
	// StopMaxTurns: the run made Limits.MaxTurns model responses.
	StopMaxTurns StopReason = "max_turns"
	// StopMaxTokens: the run used Limits.MaxTokens tokens.
	StopMaxTokens StopReason = "max_tokens"
	// StopMaxBudget: the run cost Limits.MaxBudgetUSD.
	StopMaxBudget StopReason = "max_budget_usd"
)

// AtLimit reports whether r is the stop of a turn at a limit of its Budget.
func (r StopReason) AtLimit() bool {
	return r == StopMaxTurns || r == StopMaxTokens || r == StopMaxBudget
}

// Limits bound a run (every turn of every loop sharing a Budget); zero is
// no limit.
type Limits struct {
	// MaxTurns bounds the model responses (the steps completed), as
	// Claude Code's --max-turns counts them.
	MaxTurns int
	// MaxTokens bounds the input plus output tokens the provider reported.
	MaxTokens int64
	// MaxBudgetUSD bounds the cost, in US dollars, at the model's prices.
	MaxBudgetUSD float64
}

// Any says a limit is set.
func (l Limits) Any() bool { return l.MaxTurns > 0 || l.MaxTokens > 0 || l.MaxBudgetUSD > 0 }

// Spent is what a run used so far.
type Spent struct {
	// Turns counts the model responses (completed steps).
	Turns int
	// Usage sums the usage of every model response, compactions and
	// subagents' included.
	Usage providers.Usage
	// CostUSD is the cost at the models' prices (0 when unpriced).
	CostUSD float64
}

type budgetState struct {
	limits Limits
	mu     sync.Mutex
	spent  Spent
}

// Budget counts what a run spends and says when it reaches its Limits.
// A loop checks it before each step: a turn that reached a limit stops
// there (LimitReached, then TurnEnded with the limit's StopReason). The
// zero Budget (or nil) counts nothing and never stops.
type Budget struct {
	s *budgetState
	// noTurns: a subagent's view, whose responses are not the run's turns.
	noTurns bool
}

// NewBudget returns a budget of limits.
func NewBudget(limits Limits) *Budget { return &Budget{s: &budgetState{limits: limits}} }

// Subagent is the budget seen by a subagent's loop: its tokens and cost
// count toward the run's limits, its responses are not the run's turns.
func (b *Budget) Subagent() *Budget {
	if b == nil || b.s == nil {
		return nil
	}
	return &Budget{s: b.s, noTurns: true}
}

// Limits are the budget's limits.
func (b *Budget) Limits() Limits {
	if b == nil || b.s == nil {
		return Limits{}
	}
	return b.s.limits
}

// Spent is what the run spent so far.
func (b *Budget) Spent() Spent {
	if b == nil || b.s == nil {
		return Spent{}
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return b.s.spent
}

func (b *Budget) add(u providers.Usage, cost float64) {
	if b == nil || b.s == nil {
		return
	}
	b.s.mu.Lock()
	addUsage(&b.s.spent.Usage, u)
	b.s.spent.CostUSD += cost
	b.s.mu.Unlock()
}

func (b *Budget) countTurn() {
	if b == nil || b.s == nil || b.noTurns {
		return
	}
	b.s.mu.Lock()
	b.s.spent.Turns++
	b.s.mu.Unlock()
}

// reached is the limit the run reached ("" for none) and a line saying so.
func (b *Budget) reached() (StopReason, string) {
	if b == nil || b.s == nil {
		return "", ""
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	l, s := b.s.limits, b.s.spent
	switch {
	case l.MaxTurns > 0 && s.Turns >= l.MaxTurns && !b.noTurns:
		return StopMaxTurns, fmt.Sprintf("Stopped: the run reached its limit of %d model turns (--max-turns).", l.MaxTurns)
	case l.MaxTokens > 0 && s.Usage.Total() >= l.MaxTokens:
		return StopMaxTokens, fmt.Sprintf("Stopped: the run used %d tokens, its limit is %d (--max-tokens).", s.Usage.Total(), l.MaxTokens)
	case l.MaxBudgetUSD > 0 && s.CostUSD >= l.MaxBudgetUSD:
		return StopMaxBudget, fmt.Sprintf("Stopped: the run cost $%.4f, its budget is $%.4f (--max-budget-usd).", s.CostUSD, l.MaxBudgetUSD)
	}
	return "", ""
}

// LimitReached: the turn stopped before its next step, the run having
// reached a limit of its Budget; Text says which, on one line.
type LimitReached struct {
	Reason StopReason
	Text   string
	Spent  Spent
}

func (LimitReached) event() {}

// charge counts the usage of one model response: the budget's, and the
// turn's cost at the loop's prices, which it returns.
func (l *Loop) charge(u providers.Usage) float64 {
	var cost float64
	if l.cfg.Prices != nil {
		cost = l.cfg.Prices.Cost(u)
	}
	l.turnCost += cost
	l.cfg.Budget.add(u, cost)
	return cost
}

// atLimit stops the turn when the run reached a limit of its budget.
func (l *Loop) atLimit() (StopReason, bool) {
	reason, text := l.cfg.Budget.reached()
	if reason == "" {
		return "", false
	}
	l.emit(LimitReached{Reason: reason, Text: text, Spent: l.cfg.Budget.Spent()})
	return reason, true
}
