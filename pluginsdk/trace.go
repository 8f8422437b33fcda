package pluginsdk

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The host sends each call the W3C trace context of its execute_tool span
// when it traces (OpenTelemetry). The SDK puts that span in the handler's
// ctx as a remote parent: spans the handler starts with ctx (its own, or
// an otelgrpc or otelhttp client's) nest under the host's tool call, once
// the plugin installs a tracer provider of its own. A host that traces
// nothing sends none, and ctx carries no span.

var traceContext = propagation.TraceContext{}

// withTraceContext is ctx with the remote span of carrier.
func withTraceContext(ctx context.Context, carrier map[string]string) context.Context {
	return traceContext.Extract(ctx, propagation.MapCarrier(carrier))
}

// TraceEnv is the trace context of ctx as the TRACEPARENT and TRACESTATE
// variables, for a command the tool starts (nil when ctx carries no span):
// a traced command (or the tracer it runs) nests under the call.
func TraceEnv(ctx context.Context) []string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	m := propagation.MapCarrier{}
	traceContext.Inject(ctx, m)
	env := []string{"TRACEPARENT=" + m["traceparent"]}
	if ts := m["tracestate"]; ts != "" {
		env = append(env, "TRACESTATE="+ts)
	}
	return env
}
