package telemetry

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// fakeProvider answers each request with one text, a usage and a stop.
type fakeProvider struct{}

func (fakeProvider) Name() string  { return "fake" }
func (fakeProvider) Model() string { return "m1" }
func (fakeProvider) Stream(context.Context, providers.Request) (providers.Stream, error) {
	return &fakeStream{evs: []providers.Event{
		{Kind: providers.EventText, Text: "model-said-this"},
		{Kind: providers.EventUsage, Usage: &providers.Usage{InputTokens: 10, OutputTokens: 3}},
		{Kind: providers.EventStop, Stop: providers.StopReason("end_turn")},
	}}, nil
}

type fakeStream struct{ evs []providers.Event }

func (s *fakeStream) Next() (providers.Event, error) {
	if len(s.evs) == 0 {
		return providers.Event{}, io.EOF
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, nil
}
func (s *fakeStream) Close() error { return nil }

// fakeTool records the trace context its call got, as a plugin would.
type fakeTool struct{ got map[string]string }

func (f *fakeTool) Spec() toolset.Spec {
	return toolset.Spec{Name: "Do", Source: "plugin fake", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (f *fakeTool) Call(ctx context.Context, _ string, _ json.RawMessage) toolset.Result {
	f.got = Plugin(ctx, "fake", 42)
	return toolset.Result{Kind: toolset.Failed, Brief: "it failed"}
}

func TestOffCostsNothing(t *testing.T) {
	stop, err := Setup(context.Background(), Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer stop(context.Background())
	if Enabled() {
		t.Fatal("on without an endpoint")
	}
	p := providers.ChatProvider(fakeProvider{})
	if Provider(p) != p {
		t.Error("Provider wrapped while off")
	}
	ts := toolset.New(nil)
	if Toolset(ts, ts.Find) != Tools(ts) {
		t.Error("Toolset wrapped while off")
	}
	ctx := context.Background()
	if got, _ := StartTurn(ctx, "a", "s", "hi"); got != ctx {
		t.Error("StartTurn changed ctx while off")
	}
	if Env(ctx) != nil || Carrier(ctx) != nil || PluginEnv() != nil {
		t.Error("trace context without a span")
	}
	// OTEL_SDK_DISABLED wins over an endpoint.
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}
	if _, err := Setup(ctx, Options{Getenv: func(k string) string { return env[k] }}); err != nil || Enabled() {
		t.Errorf("OTEL_SDK_DISABLED=true: err %v, enabled %v", err, Enabled())
	}
}

func TestSetupErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		opts Options
		want string
	}{
		{"protocol", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}, Options{}, `OTLP protocol "thrift"`},
		{"config endpoint", nil, Options{Endpoint: "127.0.0.1:4318"}, `endpoint "127.0.0.1:4318" is not a URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Getenv = func(k string) string { return tc.env[k] }
			_, err := Setup(context.Background(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err %v; want one line with %q", err, tc.want)
			}
			if Enabled() {
				t.Error("on after a failed Setup")
			}
		})
	}
}

// on installs an in-memory exporter and metric reader for a test.
func on(t *testing.T, contents bool) (*tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	if err := install(tp, mp, contents, nil); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{}, 1)
	toolSpanEnded = func() { ended <- struct{}{} }
	waitTool = func() { <-ended }
	t.Cleanup(func() { current.Store(nil); toolSpanEnded = nil })
	return exp, reader
}

// waitTool waits for the end of an execute_tool span (set by on).
var waitTool func()

// session runs a turn: one chat, one tool call, one approval.
func session(t *testing.T) *fakeTool {
	t.Helper()
	ft := &fakeTool{}
	ts := toolset.New(nil)
	if err := ts.Add(ft); err != nil {
		t.Fatal(err)
	}
	ctx, end := StartTurn(context.Background(), "agent1", "sess1", "the prompt")
	st, err := Provider(fakeProvider{}).Stream(ctx, providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := st.Next(); err != nil {
			break
		}
	}
	st.Close()
	tools := Toolset(ts, ts.Find)
	ts.SetGuard(guard{})
	p := tools.Handle(ctx, providers.ToolCall{ID: "call1", Name: "Do", Arguments: `{"secret":"argument-text"}`})
	<-p.Done()
	waitTool() // the execute_tool span ends on its own goroutine
	end(providers.Usage{InputTokens: 10, OutputTokens: 3}, nil)
	PluginRestarted(ctx, "fake")
	return ft
}

// guard asks the (telemetry-wrapped) decider, as a plugin's approval does.
type guard struct{}

func (guard) Admit(ctx context.Context, c toolset.Call) *toolset.Result {
	_, _ = Decider(approval.Yolo{}).Decide(ctx, approval.Request{ToolCallID: c.ID, Plugin: "fake", Action: "do it"})
	return nil
}
func (guard) Done(context.Context, toolset.Call, toolset.Result) {}

func TestSpansAndMetrics(t *testing.T) {
	exp, reader := on(t, false)
	ft := session(t)
	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	turn, chat, tool := byName["invoke_agent agent1"], byName["chat m1"], byName["execute_tool Do"]
	if !turn.SpanContext.IsValid() || !chat.SpanContext.IsValid() || !tool.SpanContext.IsValid() {
		t.Fatalf("spans %v", names(spans))
	}
	if chat.Parent.SpanID() != turn.SpanContext.SpanID() || tool.Parent.SpanID() != turn.SpanContext.SpanID() {
		t.Error("chat and execute_tool are not children of invoke_agent")
	}
	want := map[string]string{"gen_ai.provider.name": "fake", "gen_ai.request.model": "m1", "gen_ai.usage.input_tokens": "10",
		"gen_ai.usage.output_tokens": "3", "gen_ai.response.finish_reasons": `["end_turn"]`, "gen_ai.operation.name": "chat"}
	checkAttrs(t, chat.Attributes, want)
	checkAttrs(t, tool.Attributes, map[string]string{"gen_ai.tool.name": "Do", "gen_ai.tool.call.id": "call1",
		"gen_ai.tool.type": "function", "kosong.tool.status": "error", "kosong.plugin.name": "fake", "kosong.plugin.pid": "42",
		"kosong.tool.source": "plugin fake"})
	if len(tool.Events) != 1 || tool.Events[0].Name != "gen_ai.tool.approval" {
		t.Errorf("tool span events %v; want the approval", tool.Events)
	}
	if ft.got["traceparent"] != "00-"+tool.SpanContext.TraceID().String()+"-"+tool.SpanContext.SpanID().String()+"-01" {
		t.Errorf("the plugin got trace context %v", ft.got)
	}
	for _, s := range spans {
		for _, a := range s.Attributes {
			if strings.Contains(a.Value.Emit(), "argument-text") || strings.Contains(a.Value.Emit(), "model-said-this") ||
				strings.Contains(a.Value.Emit(), "the prompt") {
				t.Errorf("span %s has content %s without the opt-in", s.Name, a.Key)
			}
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[m.Name] = true
		}
	}
	for _, name := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration", "gen_ai.execute_tool.duration", "kosong.plugin.restarts"} {
		if !got[name] {
			t.Errorf("no metric %s (got %v)", name, got)
		}
	}
}

func TestContentsOptIn(t *testing.T) {
	exp, _ := on(t, true)
	session(t)
	all := ""
	for _, s := range exp.GetSpans() {
		for _, a := range s.Attributes {
			all += string(a.Key) + "=" + a.Value.Emit() + "\n"
		}
	}
	for _, want := range []string{"argument-text", "model-said-this", "the prompt"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the spans with the opt-in:\n%s", want, all)
		}
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func checkAttrs(t *testing.T, attrs []attribute.KeyValue, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, a := range attrs {
		got[string(a.Key)] = a.Value.Emit()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
