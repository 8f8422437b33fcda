package providers_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

var tiny = providers.RetryPolicy{Attempts: 3, Initial: time.Millisecond, Max: 4 * time.Millisecond}

func TestDefaultRetryPolicy(t *testing.T) {
	p := providers.DefaultRetryPolicy
	if p.Attempts != 3 || p.Initial != 300*time.Millisecond || p.Max != 5*time.Second {
		t.Fatalf("DefaultRetryPolicy = %+v", p)
	}
}

func TestBackoffBounds(t *testing.T) {
	p := providers.RetryPolicy{Attempts: 10, Initial: 100 * time.Millisecond, Max: time.Second}
	for attempt := 0; attempt <= 12; attempt++ {
		low := 100 * time.Millisecond
		for i := 1; i < attempt && low < time.Second; i++ {
			low *= 2
		}
		low = min(low, time.Second)
		for range 50 {
			d := p.Backoff(attempt)
			if d < low || d > time.Second {
				t.Fatalf("Backoff(%d) = %v, want in [%v, %v]", attempt, d, low, time.Second)
			}
		}
	}
	if d := (providers.RetryPolicy{}).Backoff(3); d != 0 {
		t.Errorf("zero policy Backoff = %v, want 0", d)
	}
	huge := providers.RetryPolicy{Initial: time.Hour}
	if d := huge.Backoff(200); d <= 0 {
		t.Errorf("uncapped Backoff(200) overflowed: %v", d)
	}
}

func TestRetry(t *testing.T) {
	retryable := &providers.Error{Provider: "p", Kind: providers.ErrServer}
	fatal := &providers.Error{Provider: "p", Kind: providers.ErrAuth}
	plain := errors.New("plain")
	tests := []struct {
		name      string
		results   []error // result of each attempt; nil = success
		wantCalls int
		wantErr   error
	}{
		{"first try", []error{nil}, 1, nil},
		{"retry then succeed", []error{retryable, retryable, nil}, 3, nil},
		{"gives up after attempts", []error{retryable, retryable, retryable, nil}, 3, retryable},
		{"not retryable", []error{fatal, nil}, 1, fatal},
		{"plain error not retried", []error{plain, nil}, 1, plain},
		{"rate limit retried", []error{&providers.Error{Kind: providers.ErrRateLimit}, nil}, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := providers.Retry(context.Background(), tiny, func(attempt int) error {
				calls++
				if attempt != calls {
					t.Errorf("attempt = %d, want %d", attempt, calls)
				}
				return tt.results[attempt-1]
			})
			if calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
			}
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestRetryZeroAttemptsMeansOne(t *testing.T) {
	calls := 0
	_ = providers.Retry(context.Background(), providers.RetryPolicy{}, func(int) error {
		calls++
		return &providers.Error{Kind: providers.ErrServer}
	})
	if calls != 1 {
		t.Fatalf("calls = %d, want 1", calls)
	}
}

func TestRetryRespectsContext(t *testing.T) {
	t.Run("cancelled before start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := providers.Retry(ctx, tiny, func(int) error {
			t.Error("fn called with a cancelled context")
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("cancelled during backoff", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		long := providers.RetryPolicy{Attempts: 5, Initial: time.Hour, Max: time.Hour}
		calls := 0
		err := providers.Retry(ctx, long, func(int) error {
			calls++
			cancel() // the backoff that follows must end with the context
			return &providers.Error{Provider: "p", Kind: providers.ErrConnection}
		})
		if calls != 1 {
			t.Errorf("calls = %d, want 1", calls)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}
