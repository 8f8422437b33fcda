package toolset

import (
	"context"
	"errors"
	"sync"
	"time"
)

// A call's timeout is an idle timeout: it restarts whenever the tool reports
// progress (KeepAlive), so a long call that keeps reporting is not cut off.

type keepAliveKey struct{}

// errTimedOut is the cause of a call's context ending at its timeout.
var errTimedOut = errors.New("the tool call timed out")

// KeepAlive restarts the timeout clock of the call whose context ctx is (or
// derives from); tools call it when they report progress. It does nothing
// for a call without a timeout, one that has already timed out, or one
// whose clock is paused.
func KeepAlive(ctx context.Context) {
	if c, ok := ctx.Value(keepAliveKey{}).(*idleClock); ok {
		c.keepAlive()
	}
}

// PauseTimeout stops the timeout clock of ctx's call until resume is
// called, which starts it afresh: the time a plugin takes to start (first
// started at this call, or restarted after a crash) is bounded by the start
// timeout, not taken from the call's own. Cancelling the call still ends
// it. It does nothing for a call without a timeout.
func PauseTimeout(ctx context.Context) (resume func()) {
	c, ok := ctx.Value(keepAliveKey{}).(*idleClock)
	if !ok {
		return func() {}
	}
	c.mu.Lock()
	c.paused++
	c.timer.Stop()
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.paused--; c.paused == 0 && c.ctx.Err() == nil {
				c.timer.Reset(c.d)
			}
		})
	}
}

// idleClock is a call's timeout clock.
type idleClock struct {
	ctx    context.Context
	d      time.Duration
	timer  *time.Timer
	mu     sync.Mutex
	paused int
}

func (c *idleClock) keepAlive() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused == 0 && c.ctx.Err() == nil {
		c.timer.Reset(c.d)
	}
}

// withIdleTimeout returns a context that ends, with the cause errTimedOut,
// once d passes without KeepAlive (and outside PauseTimeout); stop
// releases it.
func withIdleTimeout(ctx context.Context, d time.Duration) (_ context.Context, stop func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	c := &idleClock{ctx: cctx, d: d}
	c.mu.Lock()
	c.timer = time.AfterFunc(d, func() {
		c.mu.Lock()
		paused := c.paused > 0
		c.mu.Unlock()
		if !paused {
			cancel(errTimedOut)
		}
	})
	c.mu.Unlock()
	return context.WithValue(cctx, keepAliveKey{}, c), func() {
		c.mu.Lock()
		c.timer.Stop()
		c.mu.Unlock()
		cancel(nil)
	}
}

// timedOut reports whether ctx ended at its call's timeout.
func timedOut(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errTimedOut) }
