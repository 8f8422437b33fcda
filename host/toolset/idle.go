package toolset

import (
	"context"
	"errors"
	"time"
)

// A call's timeout is an idle timeout: it restarts whenever the tool reports
// progress (KeepAlive), so a long call that keeps reporting is not cut off.

type keepAliveKey struct{}

// errTimedOut is the cause of a call's context ending at its timeout.
var errTimedOut = errors.New("the tool call timed out")

// KeepAlive restarts the timeout clock of the call whose context ctx is (or
// derives from); tools call it when they report progress. It does nothing
// for a call without a timeout or one that has already timed out.
func KeepAlive(ctx context.Context) {
	if f, ok := ctx.Value(keepAliveKey{}).(func()); ok {
		f()
	}
}

// withIdleTimeout returns a context that ends, with the cause errTimedOut,
// once d passes without KeepAlive; stop releases it.
func withIdleTimeout(ctx context.Context, d time.Duration) (_ context.Context, stop func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(d, func() { cancel(errTimedOut) })
	keepAlive := func() {
		if cctx.Err() == nil {
			timer.Reset(d)
		}
	}
	return context.WithValue(cctx, keepAliveKey{}, keepAlive), func() {
		timer.Stop()
		cancel(nil)
	}
}

// timedOut reports whether ctx ended at its call's timeout.
func timedOut(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errTimedOut) }
