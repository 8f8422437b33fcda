package pluginsdk

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestTraceContext: the host's trace context becomes the remote parent in
// a handler's ctx, and goes on to a command as TRACEPARENT/TRACESTATE; a
// call without one (an untraced host, a bad value) has no span.
func TestTraceContext(t *testing.T) {
	const tp = "00-0a1f1e4a8eaa8091ca48236ba5b3790b-cf21a85b2aa5ab88-01"
	for _, tc := range []struct {
		name    string
		carrier map[string]string
		want    []string
	}{
		{"traced", map[string]string{"traceparent": tp, "tracestate": "k=v"}, []string{"TRACEPARENT=" + tp, "TRACESTATE=k=v"}},
		{"no state", map[string]string{"traceparent": tp}, []string{"TRACEPARENT=" + tp}},
		{"untraced", nil, nil},
		{"bad traceparent", map[string]string{"traceparent": "00-nonsense"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := withTraceContext(context.Background(), tc.carrier)
			if got := TraceEnv(ctx); !slices.Equal(got, tc.want) {
				t.Errorf("TraceEnv = %q, want %q", got, tc.want)
			}
			sc := trace.SpanContextFromContext(ctx)
			if sc.IsValid() != (tc.want != nil) || (sc.IsValid() && !sc.IsRemote()) {
				t.Errorf("span context %v (remote %v)", sc.IsValid(), sc.IsRemote())
			}
		})
	}
}
