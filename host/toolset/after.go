package toolset

import "context"

type afterKey struct{}

// WithAfter is ctx with f to be called with the result of the call
// Handle starts with it, once the result is in and the caller can have
// it (after Pending.Done is closed), on the call's own goroutine; for a
// call resolved at once, before Handle returns. It spares a wrapper (the
// telemetry's execute_tool span) a goroutine of its own per call.
func WithAfter(ctx context.Context, f func(Result)) context.Context {
	return context.WithValue(ctx, afterKey{}, f)
}

// takeAfter is ctx's WithAfter function (nil: none) and ctx without it,
// so that calls the tool makes itself (a subagent's) do not call it.
func takeAfter(ctx context.Context) (context.Context, func(Result)) {
	f, _ := ctx.Value(afterKey{}).(func(Result))
	if f == nil {
		return ctx, nil
	}
	return context.WithValue(ctx, afterKey{}, (func(Result))(nil)), f
}
