//go:build unix

package bench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/telemetry"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// BenchmarkTracingRoundTrip: the cost of tracing on the call round trip
// (Handle -> Echo plugin -> result), with the OTLP exporter on (sending
// to a local receiver that accepts everything): each traced call makes
// its execute_tool span, sends the trace context to the plugin and ends
// the span; the untraced call is the same round trip with no span.
// Measured call by call in turn (see measureInterleaved). Target: under
// 5 %. Beside them, the same pair with an in-process no-op tool that
// does the plugin tool's tracing work (plugin attributes on the span,
// trace context made) instead of a plugin call: the tracing's own time
// per call, without the process boundary. On a machine whose cores are
// busy, that time (span, context, the exporter's batches, the garbage
// they make) adds to the round trip instead of overlapping the wait for
// the plugin.
func BenchmarkTracingRoundTrip(b *testing.B) {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer receiver.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.URL}
	stop, err := telemetry.Setup(context.Background(), telemetry.Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		b.Fatal(err)
	}
	defer stop(context.Background())
	path, _ := echoAgent(b)
	ctx := context.Background()
	a, err := agent.Load(ctx, path, agent.Options{WorkDir: b.TempDir(), StateDir: b.TempDir(), Decider: approval.Yolo{}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	traced := telemetry.Toolset(a.Toolset, a.Toolset.Find)
	turn, end := telemetry.StartTurn(ctx, "b", "", "")
	defer end(providers.Usage{}, nil)
	call := providers.ToolCall{ID: "c", Name: "Echo", Arguments: `{"text":"hello"}`}
	local := toolset.New(nil)
	if err := local.Add(tracedNop{nopTool{spec: toolset.Spec{Name: "Echo", Parameters: a.Toolset.Tools()[0].Parameters}}}); err != nil {
		b.Fatal(err)
	}
	tracedLocal := telemetry.Toolset(local, local.Find)
	b.ResetTimer()
	res := measureInterleaved(
		func() {
			if r := a.Toolset.Handle(ctx, call).Result(); r.IsError() {
				b.Fatal(r.Message)
			}
		},
		func() {
			if r := traced.Handle(turn, call).Result(); r.IsError() {
				b.Fatal(r.Message)
			}
		},
		func() { local.Handle(ctx, call).Result() },
		func() { tracedLocal.Handle(turn, call).Result() })
	b.StopTimer()
	off, on := res[0][0], res[1][0]
	overhead := 100 * (float64(on) - float64(off)) / float64(off)
	b.ReportMetric(us(off), "untraced-p50-us")
	b.ReportMetric(us(on), "traced-p50-us")
	b.ReportMetric(overhead, "tracing-overhead-%")
	b.ReportMetric(us(res[3][0])-us(res[2][0]), "tracing-own-us")
	report(b, "tracing on the echo round trip, exporter on (p50 / p99):")
	report(b, "  untraced Handle -> plugin -> result      : %8.1f / %8.1f us", us(off), us(res[0][1]))
	report(b, "  traced (execute_tool span, context sent) : %8.1f / %8.1f us", us(on), us(res[1][1]))
	report(b, "  cost of tracing                          : %+8.1f %% (target: under 5 %%)", overhead)
	report(b, "  in-process no-op tool, untraced / traced : %8.1f / %8.1f us p50 (the tracing's own time: %+.1f us)",
		us(res[2][0]), us(res[3][0]), us(res[3][0])-us(res[2][0]))
}

// tracedNop is a no-op tool that does what a plugin tool does for the
// tracing: the plugin's name and pid on the call's span, and the trace
// context to send.
type tracedNop struct{ nopTool }

func (t tracedNop) Call(ctx context.Context, id string, args json.RawMessage) toolset.Result {
	_ = telemetry.Plugin(ctx, "echo", 1)
	return t.nopTool.Call(ctx, id, args)
}
