package deadline

import (
	"context"
	"testing"
	"time"
)

func TestAwait(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // 0: no deadline
		waits   bool
	}{
		{"no deadline", 0, false},
		{"deadline far away", time.Hour, false},
		{"deadline within the slack", Slack / 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				t.Cleanup(cancel)
			}
			done := make(chan struct{})
			go func() { Await(ctx); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("Await did not return")
			}
			if ended := ctx.Err() != nil; ended != tt.waits {
				t.Fatalf("ctx ended %v after Await, want %v", ended, tt.waits)
			}
		})
	}
}

// A context whose deadline passes without ending it (not one of the
// context package's) does not hold Await past the slack.
func TestAwaitBounded(t *testing.T) {
	ctx := stuck{Context: context.Background(), dl: time.Now().Add(Slack / 4)}
	done := make(chan struct{})
	go func() { Await(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Await did not return")
	}
}

type stuck struct {
	context.Context
	dl time.Time
}

func (s stuck) Deadline() (time.Time, bool) { return s.dl, true }
