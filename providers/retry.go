package providers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often and how patiently a failed model call is
// retried. Providers do not retry on their own: the agent loop retries whole
// steps with Retry.
type RetryPolicy struct {
	// Attempts is the total number of attempts, the first one included.
	// Zero or less means one attempt.
	Attempts int
	// Initial is the backoff after the first failed attempt; it doubles
	// after each further failure.
	Initial time.Duration
	// Max caps the backoff, jitter included.
	Max time.Duration
}

// DefaultRetryPolicy mirrors Kimi CLI: 3 attempts, exponential backoff with
// jitter starting at 0.3 s and capped at 5 s.
var DefaultRetryPolicy = RetryPolicy{Attempts: 3, Initial: 300 * time.Millisecond, Max: 5 * time.Second}

// Backoff is the pause after failed attempt number attempt (1-based) before
// the next one: Initial·2^(attempt-1) plus up to 50% random jitter, never
// more than Max. The result always lies in [min(Initial·2^(attempt-1), Max), Max].
func (p RetryPolicy) Backoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if p.Initial <= 0 {
		return 0
	}
	d := p.Initial
	for i := 1; i < attempt; i++ {
		if p.Max > 0 && d >= p.Max {
			break
		}
		if d > time.Duration(1<<62)/2 { // overflow guard
			break
		}
		d *= 2
	}
	if p.Max > 0 && d >= p.Max {
		return p.Max
	}
	if half := int64(d / 2); half > 0 {
		d += time.Duration(rand.Int64N(half + 1))
	}
	if p.Max > 0 && d > p.Max {
		d = p.Max
	}
	return d
}

// Retry calls fn until it succeeds, returns an error that is not retryable
// (see IsRetryable), or policy.Attempts attempts have been made; it waits
// policy.Backoff between attempts. attempt counts from 1. The last error is
// returned as is. When ctx ends, Retry stops at once and returns an error
// wrapping ctx.Err() (and naming the last failure, if any).
func Retry(ctx context.Context, policy RetryPolicy, fn func(attempt int) error) error {
	attempts := max(policy.Attempts, 1)
	var last error
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			if last != nil {
				return fmt.Errorf("%w (last error: %v)", err, last)
			}
			return err
		}
		last = fn(attempt)
		if last == nil {
			return nil
		}
		if !IsRetryable(last) || attempt >= attempts {
			return last
		}
		timer := time.NewTimer(policy.Backoff(attempt))
		select {
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
		case <-timer.C:
		}
	}
}
