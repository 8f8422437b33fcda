package pluginrpc

import (
	"context"
	"testing"
	"time"
)

func TestWatchdog(t *testing.T) {
	t.Run("a handler still running after the grace period overruns", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		overrun := make(chan struct{})
		stop := watchdog(ctx, 10*time.Millisecond, func() { close(overrun) })
		defer stop()
		cancel()
		select {
		case <-overrun:
		case <-time.After(10 * time.Second):
			t.Fatal("no overrun")
		}
	})
	t.Run("a handler that returns in time does not", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		overrun := make(chan struct{}, 1)
		stop := watchdog(ctx, 10*time.Millisecond, func() { overrun <- struct{}{} })
		cancel()
		stop()
		select {
		case <-overrun:
			t.Fatal("overrun after the handler returned")
		case <-time.After(100 * time.Millisecond):
		}
	})
}

func TestCancelGrace(t *testing.T) {
	for env, want := range map[string]time.Duration{"": DefaultCancelGrace, "2s": 2 * time.Second, "junk": DefaultCancelGrace, "-1s": DefaultCancelGrace} {
		t.Setenv(CancelGraceEnv, env)
		if got := cancelGrace(); got != want {
			t.Errorf("%q: %s, want %s", env, got, want)
		}
	}
}

func TestGCPercent(t *testing.T) {
	for v, want := range map[string]int{"100": 100, "50": 50, "": 100, "off": 100, "-1": 100, "0": 100} {
		if got := gcPercent(v); got != want {
			t.Errorf("%q: %d, want %d", v, got, want)
		}
	}
}
