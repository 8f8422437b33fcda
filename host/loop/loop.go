// Package loop runs the agent loop. A turn appends the user's message and
// runs steps until the model calls no tool; a step streams one model
// response and hands each tool call to the toolset the moment it arrives,
// so tools run while the model still streams, concurrently.
//
// The loop knows a providers.ChatProvider and the small Toolset interface
// below, nothing of plugins, gRPC or approvals. History stays consistent: a
// step's assistant message and its tool messages are appended together,
// once every call has its one result. What happened is never dropped: a
// step interrupted by the user, or whose stream broke after some of its
// calls ran, enters the history with the calls it made and their results
// (real ones, or ones saying the call was cancelled), so no call is run
// twice and the model learns what really happened (see
// docs/safety-and-failure.md: the agent loop under faults).
package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/config"
)

// Toolset runs tool calls. Handle must return at once; the call runs until
// its result is in or ctx is cancelled. *toolset.Toolset implements it.
type Toolset interface {
	Tools() []providers.ToolDef
	Handle(ctx context.Context, call providers.ToolCall) *toolset.Pending
}

// DefaultMaxStepsPerTurn bounds the steps of one turn.
const DefaultMaxStepsPerTurn = 100

// DefaultCancelGrace is how long a cancelled or failed step waits for its
// cancelled tool calls to return.
const DefaultCancelGrace = 5 * time.Second

// Config configures a Loop.
type Config struct {
	Provider providers.ChatProvider
	Toolset  Toolset
	// System is the system prompt.
	System string
	// History is the conversation so far (e.g. a resumed session).
	History []providers.Message
	// MaxStepsPerTurn; 0 means DefaultMaxStepsPerTurn.
	MaxStepsPerTurn int
	// Retry is the retry policy of a step; nil means
	// providers.DefaultRetryPolicy.
	Retry *providers.RetryPolicy
	// Observer receives the events; nil drops them.
	Observer Observer
	// CancelGrace; 0 means DefaultCancelGrace.
	CancelGrace time.Duration
	// MaxContextSize is the model's context window in tokens; when the
	// context nears it the history is compacted. 0 (unknown) never compacts.
	MaxContextSize int64
	// Hooks are the user's hooks around turns and compaction; nil runs none.
	Hooks Hooks
	// BeforeStep runs before each step (each attempt), between steps: a
	// changed toolset takes effect there, so the model sees it at its
	// next step. nil does nothing.
	BeforeStep func(ctx context.Context)
	// Prices are the model's prices: each response's cost is reported
	// (UsageReported, TurnEnded) and counted by Budget. nil: unpriced.
	Prices *config.Prices
	// Budget counts what the run spends and stops a turn at its limits
	// (budget.go); nil never stops.
	Budget *Budget
}

// Hooks are the user's hooks the loop runs (host/hooks implements them).
type Hooks interface {
	// UserPromptSubmit runs before a turn; blocked stops the turn before
	// any model call, reason shown to the user.
	UserPromptSubmit(ctx context.Context, prompt string) (blocked bool, reason string)
	// Stop runs when the model answers without a tool call; a non-empty
	// reason is sent as a user message and the turn goes on, once.
	Stop(ctx context.Context, stopHookActive bool) (reason string)
	// PreCompact and PostCompact run around a compaction of the history.
	PreCompact(ctx context.Context, trigger string, tokens int64)
	PostCompact(ctx context.Context, trigger string, tokens int64)
}

// PromptBlockedText is shown when a UserPromptSubmit hook blocks a prompt
// without a reason.
const PromptBlockedText = "Prompt blocked by hook."

// StopReason says why a turn ended.
type StopReason string

// The stop reasons.
const (
	// StopDone: the model answered without calling a tool.
	StopDone StopReason = "done"
	// StopRejected: the user rejected a tool call without feedback; the
	// model is to wait for the user.
	StopRejected StopReason = "rejected"
	// StopCancelled: the turn's context ended.
	StopCancelled StopReason = "cancelled"
	// StopError: the turn failed.
	StopError StopReason = "error"
	// StopToolCallRepeat: the repeat guard stopped the turn: the model
	// made the same call in too many consecutive steps.
	StopToolCallRepeat StopReason = "tool_call_repeat"
	// StopBlocked: a UserPromptSubmit hook blocked the prompt; the model
	// was not called.
	StopBlocked StopReason = "blocked"
)

// TurnResult sums up a turn.
type TurnResult struct {
	// Steps counts the steps completed (appended to history).
	Steps int
	// Usage sums the usage of every model response of the turn, failed
	// attempts included.
	Usage providers.Usage
	// CostUSD is the cost of Usage at Config.Prices; Priced says there
	// are prices.
	CostUSD float64
	Priced  bool
	Reason  StopReason
	// ModelStop is why the model stopped its last response, as the
	// provider reported it ("" when it did not).
	ModelStop providers.StopReason
	// Unsteered are the messages steered into the turn (Steer) that no
	// step took, the turn having ended first (interrupted, failed, or
	// stopped by a rejection or the repeat guard); the front end gives
	// them back to the user.
	Unsteered []string
}

// MaxStepsError ends a turn that used its steps without an answer.
type MaxStepsError struct{ N int }

func (e *MaxStepsError) Error() string { return fmt.Sprintf("Max number of steps reached: %d", e.N) }

// RetriesExhaustedError is a retryable provider failure that persisted
// through every attempt. It unwraps to the last failure, so
// providers.IsRetryable still reports true.
type RetriesExhaustedError struct {
	Attempts int
	Err      error
}

func (e *RetriesExhaustedError) Error() string {
	s := "s"
	if e.Attempts == 1 {
		s = ""
	}
	return fmt.Sprintf("the model request failed after %d attempt%s: %v", e.Attempts, s, e.Err)
}

func (e *RetriesExhaustedError) Unwrap() error { return e.Err }

// Loop is an agent's conversation with a model. Turns run one at a time.
type Loop struct {
	cfg    Config
	policy providers.RetryPolicy

	turnMu  sync.Mutex
	mu      sync.Mutex
	history []providers.Message
	steer   steering
	// tokens is the context size the last response reported (turn goroutine only).
	tokens int64
	// turnCost is the cost of the running turn so far (turn goroutine only).
	turnCost float64
}

// New returns a Loop.
func New(cfg Config) (*Loop, error) {
	if cfg.Provider == nil {
		return nil, errors.New("loop: no provider")
	}
	if cfg.Toolset == nil {
		return nil, errors.New("loop: no toolset")
	}
	if cfg.MaxStepsPerTurn <= 0 {
		cfg.MaxStepsPerTurn = DefaultMaxStepsPerTurn
	}
	if cfg.Observer == nil {
		cfg.Observer = ObserverFunc(func(Event) {})
	}
	if cfg.CancelGrace <= 0 {
		cfg.CancelGrace = DefaultCancelGrace
	}
	l := &Loop{cfg: cfg, policy: providers.DefaultRetryPolicy, history: slices.Clone(cfg.History)}
	if cfg.Retry != nil {
		l.policy = *cfg.Retry
	}
	return l, nil
}

// History returns a copy of the conversation history.
func (l *Loop) History() []providers.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.history)
}

func (l *Loop) appendHistory(msgs ...providers.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.history = append(l.history, msgs...)
}

// snapshot is the history as sent to the provider. Only the goroutine
// running the turn appends, and appends never touch the elements a
// previous snapshot sees, so no copy is needed.
func (l *Loop) snapshot() []providers.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.history[:len(l.history):len(l.history)]
}

func (l *Loop) emit(e Event) { l.cfg.Observer.Observe(e) }

// Turn sends the user's input and runs steps until the model answers
// without calling a tool, a tool call is rejected without feedback, the
// repeat guard stops it, an error occurs or ctx ends. Completed steps stay
// in the history whatever happens; so do the calls of an interrupted or
// failed step, each with one result. An interrupted turn ends with
// InterruptedNote as a user message. Every turn ends with a TurnEnded event.
func (l *Loop) Turn(ctx context.Context, input string) (TurnResult, error) {
	return l.TurnContent(ctx, []providers.ContentPart{providers.TextPart(input)})
}

// TurnContent is Turn with a user message of several parts (a prompt and
// the files attached to it, images included); UserPromptSubmit hooks get
// its text parts.
func (l *Loop) TurnContent(ctx context.Context, content []providers.ContentPart) (TurnResult, error) {
	l.turnMu.Lock()
	defer l.turnMu.Unlock()

	if l.cfg.Hooks != nil {
		input := providers.Message{Content: content}.Text()
		if blocked, reason := l.cfg.Hooks.UserPromptSubmit(ctx, input); blocked {
			if reason == "" {
				reason = PromptBlockedText
			}
			l.emit(TextDelta{Text: reason})
			l.emit(TurnEnded{Reason: StopBlocked})
			return TurnResult{Reason: StopBlocked}, nil
		}
	}
	l.appendHistory(providers.Message{Role: providers.RoleUser, Content: content})
	l.openSteering()
	l.turnCost = 0
	res, err := l.turn(ctx)
	res.CostUSD, res.Priced = l.turnCost, l.cfg.Prices != nil
	res.Unsteered = l.closeSteering()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		res.Reason = StopCancelled
		err = ctx.Err()
		l.appendHistory(providers.Message{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart(InterruptedNote)}})
	default:
		res.Reason = StopError
		l.emit(TurnFailed{Err: err})
	}
	l.emit(TurnEnded{Steps: res.Steps, Usage: res.Usage, CostUSD: res.CostUSD, Priced: res.Priced, Reason: res.Reason,
		ModelStop: res.ModelStop, Err: err})
	return res, err
}

func (l *Loop) turn(ctx context.Context) (TurnResult, error) {
	var res TurnResult
	repeats := map[string]int{}
	stopHookActive := false
	for step := 1; ; step++ {
		if reason, stop := l.atLimit(); stop {
			res.Reason = reason
			return res, nil
		}
		if step > l.cfg.MaxStepsPerTurn {
			return res, &MaxStepsError{N: l.cfg.MaxStepsPerTurn}
		}
		if needsCompaction(l.tokens, l.cfg.MaxContextSize) {
			if l.cfg.Hooks != nil {
				l.cfg.Hooks.PreCompact(ctx, "auto", l.tokens)
			}
			err := l.compact(ctx, l.tokens, &res.Usage)
			if l.cfg.Hooks != nil && err == nil && ctx.Err() == nil {
				l.cfg.Hooks.PostCompact(ctx, "auto", l.tokens)
			}
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			if err != nil {
				// The step goes on with the full history; the provider
				// says so if it is really too long.
				l.emit(Compacted{Tokens: l.tokens, Err: err})
			}
			l.tokens = 0
		}
		out, err := l.stepWithRetry(ctx, step, &repeats, &res.Usage)
		if err != nil {
			return res, err
		}
		l.appendHistory(out.messages()...)
		l.cfg.Budget.countTurn()
		if out.contextTokens > 0 {
			l.tokens = out.contextTokens
		}
		res.Steps = step
		res.ModelStop = out.stopReason
		repeats = out.repeats
		if !out.repeatStop && !out.plainRejection() && l.deliverSteered(step, len(out.calls) == 0) {
			continue // the model answers what was steered in
		}
		switch {
		case out.repeatStop:
			res.Reason = StopToolCallRepeat
			return res, nil
		case len(out.calls) == 0:
			if l.cfg.Hooks != nil && !stopHookActive {
				if reason := l.cfg.Hooks.Stop(ctx, false); reason != "" && ctx.Err() == nil {
					stopHookActive = true
					l.appendHistory(providers.Message{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart(reason)}})
					continue
				}
			}
			res.Reason = StopDone
			return res, nil
		case out.plainRejection():
			res.Reason = StopRejected
			return res, nil
		}
	}
}

// stepWithRetry runs a step, again after a retryable provider error, as
// the retry policy allows. An attempt that fails after some of its calls
// ran is not thrown away: its text so far and its calls with their results
// enter the history first (they are not run again), so the next attempt
// continues from what really happened. So do the calls of an attempt that
// is interrupted or fails for good, with results saying they were cancelled.
func (l *Loop) stepWithRetry(ctx context.Context, step int, repeats *map[string]int, usage *providers.Usage) (*stepOutput, error) {
	attempts := max(l.policy.Attempts, 1)
	for attempt := 1; ; attempt++ {
		if l.cfg.BeforeStep != nil {
			l.cfg.BeforeStep(ctx)
		}
		l.emit(StepStarted{Step: step, Attempt: attempt})
		out, err := l.step(ctx, step, *repeats, usage)
		if err == nil {
			return out, nil
		}
		var kept []providers.ToolCall
		switch {
		case ctx.Err() != nil:
			// Interrupted: what the step did so far stays.
			if !out.empty() {
				l.appendHistory(out.messages()...)
			}
			l.emit(StepInterrupted{Step: step, Calls: out.toolCalls(), Text: out.text})
			return nil, ctx.Err()
		case out.repeatStop:
			// The repeat guard ends the turn anyway: this attempt is its
			// last step.
			return out, nil
		case len(out.calls) > 0:
			l.appendHistory(out.messages()...)
			*repeats = out.repeats
			kept = out.toolCalls()
		}
		if !providers.IsRetryable(err) {
			return nil, err
		}
		if attempt >= attempts {
			return nil, &RetriesExhaustedError{Attempts: attempts, Err: err}
		}
		delay := l.policy.Backoff(attempt)
		l.emit(StepRetried{Step: step, Attempt: attempt + 1, MaxAttempts: attempts, Delay: delay, Err: err, Kept: kept})
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}
