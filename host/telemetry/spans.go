package telemetry

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// The GenAI semantic-convention attribute keys used here.
const (
	attrOperation     = "gen_ai.operation.name"
	attrProvider      = "gen_ai.provider.name"
	attrRequestModel  = "gen_ai.request.model"
	attrAgentName     = "gen_ai.agent.name"
	attrConversation  = "gen_ai.conversation.id"
	attrInputTokens   = "gen_ai.usage.input_tokens"
	attrOutputTokens  = "gen_ai.usage.output_tokens"
	attrFinishReasons = "gen_ai.response.finish_reasons"
	attrTokenType     = "gen_ai.token.type"
	attrToolName      = "gen_ai.tool.name"
	attrToolCallID    = "gen_ai.tool.call.id"
	attrToolType      = "gen_ai.tool.type"
	attrToolArgs      = "gen_ai.tool.call.arguments"
	attrToolResult    = "gen_ai.tool.call.result"
	attrErrorType     = "error.type"
	attrOutputText    = "gen_ai.output.text"
	attrInputText     = "gen_ai.input.text"
	// kosong's own.
	attrToolSource = "kosong.tool.source"
	attrToolStatus = "kosong.tool.status"
	attrPlugin     = "kosong.plugin.name"
	attrPluginPID  = "kosong.plugin.pid"
	attrMCPServer  = "kosong.mcp.server"
)

// StartTurn starts the invoke_agent span of one turn of the named agent
// in session (a subagent's turn, whose ctx is its Agent tool call's, nests
// under it). end finishes it with the turn's outcome; when telemetry is
// off ctx comes back as it is.
func StartTurn(ctx context.Context, agent, session, input string) (context.Context, func(usage providers.Usage, err error)) {
	s := current.Load()
	if s == nil {
		return ctx, func(providers.Usage, error) {}
	}
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "invoke_agent"), attribute.String(attrAgentName, agent)}
	if session != "" {
		attrs = append(attrs, attribute.String(attrConversation, session))
	}
	if s.contents && input != "" {
		attrs = append(attrs, attribute.String(attrInputText, input))
	}
	ctx, span := s.tracer.Start(ctx, "invoke_agent "+agent, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	start := time.Now()
	return ctx, func(u providers.Usage, err error) {
		span.SetAttributes(attribute.Int64(attrInputTokens, u.InputTokens), attribute.Int64(attrOutputTokens, u.OutputTokens))
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
			span.SetAttributes(attribute.String(attrErrorType, errorType(err)))
		}
		s.opDuration.Record(context.WithoutCancel(ctx), since(start), metric.WithAttributes(
			attribute.String(attrOperation, "invoke_agent"), attribute.String(attrAgentName, agent)))
		span.End()
	}
}

func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "_OTHER"
}

// Provider is p with a chat span around each model request (p itself
// when telemetry is off).
func Provider(p providers.ChatProvider) providers.ChatProvider {
	if p == nil || current.Load() == nil {
		return p
	}
	return &provider{ChatProvider: p}
}

type provider struct{ providers.ChatProvider }

func (p *provider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	s := current.Load()
	if s == nil {
		return p.ChatProvider.Stream(ctx, req)
	}
	model := p.Model()
	attrs := []attribute.KeyValue{attribute.String(attrOperation, "chat"), attribute.String(attrProvider, p.Name()),
		attribute.String(attrRequestModel, model)}
	ctx, span := s.tracer.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	st := &stream{s: s, span: span, ctx: context.WithoutCancel(ctx), start: time.Now(), attrs: attrs}
	inner, err := p.ChatProvider.Stream(ctx, req)
	if err != nil {
		st.end(err)
		return nil, err
	}
	st.Stream = inner
	if ss, ok := inner.(providers.SignedStream); ok {
		return &signedStream{stream: st, signed: ss}, nil
	}
	return st, nil
}

// stream ends its chat span at the end of the response (EOF, an error,
// or Close).
type stream struct {
	providers.Stream
	s     *state
	span  trace.Span
	ctx   context.Context
	start time.Time
	attrs []attribute.KeyValue

	usage   providers.Usage
	reasons []string
	text    []byte
	once    sync.Once
}

type signedStream struct {
	*stream
	signed providers.SignedStream
}

func (s *signedStream) ReasoningSignature() string { return s.signed.ReasoningSignature() }

func (st *stream) Next() (providers.Event, error) {
	ev, err := st.Stream.Next()
	switch {
	case errors.Is(err, io.EOF):
		st.end(nil)
	case err != nil:
		st.end(err)
	default:
		switch ev.Kind {
		case providers.EventUsage:
			if ev.Usage != nil {
				st.usage.InputTokens += ev.Usage.InputTokens
				st.usage.OutputTokens += ev.Usage.OutputTokens
			}
		case providers.EventStop:
			st.reasons = append(st.reasons, string(ev.Stop))
		case providers.EventText:
			if st.s.contents {
				st.text = append(st.text, ev.Text...)
			}
		}
	}
	return ev, err
}

func (st *stream) Close() error {
	st.end(errors.New("the response was not read to its end"))
	if st.Stream == nil {
		return nil
	}
	return st.Stream.Close()
}

func (st *stream) end(err error) {
	st.once.Do(func() {
		u := st.usage
		st.span.SetAttributes(attribute.Int64(attrInputTokens, u.InputTokens), attribute.Int64(attrOutputTokens, u.OutputTokens))
		if len(st.reasons) > 0 {
			st.span.SetAttributes(attribute.StringSlice(attrFinishReasons, st.reasons))
		}
		if len(st.text) > 0 {
			st.span.SetAttributes(attribute.String(attrOutputText, string(st.text)))
		}
		attrs := st.attrs
		if err != nil {
			st.span.SetStatus(codes.Error, err.Error())
			attrs = append(attrs[:len(attrs):len(attrs)], attribute.String(attrErrorType, errorType(err)))
		}
		st.s.opDuration.Record(st.ctx, since(st.start), metric.WithAttributes(attrs...))
		in := append(attrs[:len(attrs):len(attrs)], attribute.String(attrTokenType, "input"))
		out := append(attrs[:len(attrs):len(attrs)], attribute.String(attrTokenType, "output"))
		if u.InputTokens > 0 {
			st.s.tokens.Record(st.ctx, float64(u.InputTokens), metric.WithAttributes(in...))
		}
		if u.OutputTokens > 0 {
			st.s.tokens.Record(st.ctx, float64(u.OutputTokens), metric.WithAttributes(out...))
		}
		st.span.End()
	})
}

// Tools runs tool calls: what the loop's toolset is (loop.Toolset).
type Tools interface {
	Tools() []providers.ToolDef
	Handle(ctx context.Context, call providers.ToolCall) *toolset.Pending
}

// Toolset is ts with an execute_tool span around each call, the span in
// the call's ctx (so plugins, MCP servers and commands get it); ts itself
// when telemetry is off. find, if set, names a call's tool's source.
func Toolset(ts Tools, find func(name string) (toolset.Tool, bool)) Tools {
	if current.Load() == nil {
		return ts
	}
	return &tools{inner: ts, find: find}
}

type tools struct {
	inner Tools
	find  func(string) (toolset.Tool, bool)
	// attrs are the toolAttrs by tool name and source (a reload may
	// change the source of a name).
	attrs sync.Map // attrKey -> *toolAttrs
}

// calls are the running execute_tool spans by tool call id, for what
// hears of a call without its ctx (approvals asked over a plugin's own
// connection).
var calls sync.Map // id -> trace.Span

// toolSpanEnded, if set, is called after each execute_tool span ends
// (tests).
var toolSpanEnded func()

func (t *tools) Tools() []providers.ToolDef { return t.inner.Tools() }

func (t *tools) Handle(ctx context.Context, call providers.ToolCall) *toolset.Pending {
	s := current.Load()
	if s == nil {
		return t.inner.Handle(ctx, call)
	}
	ta := t.attrsOf(call.Name)
	attrs := make([]attribute.KeyValue, 0, len(ta.span)+2)
	attrs = append(append(attrs, ta.span...), attribute.String(attrToolCallID, call.ID))
	if s.contents {
		attrs = append(attrs, attribute.String(attrToolArgs, call.Arguments))
	}
	ctx, span := s.tracer.Start(ctx, ta.name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	calls.Store(call.ID, span)
	start := time.Now()
	end := func(r toolset.Result) {
		calls.CompareAndDelete(call.ID, span)
		status := kindName(r)
		opt := ta.ok
		if r.Kind != toolset.Ok {
			span.SetStatus(codes.Error, r.Brief)
			span.SetAttributes(attribute.String(attrToolStatus, status), attribute.String(attrErrorType, status))
			opt = metric.WithAttributes(attribute.String(attrOperation, "execute_tool"), attribute.String(attrToolName, call.Name),
				attribute.String(attrErrorType, status))
		} else {
			span.SetAttributes(statusOK)
		}
		if s.contents {
			span.SetAttributes(attribute.String(attrToolResult, r.ToolMessage().Text()))
		}
		s.toolDuration.Record(context.WithoutCancel(ctx), since(start), opt)
		span.End()
		if toolSpanEnded != nil {
			toolSpanEnded()
		}
	}
	if _, ok := t.inner.(*toolset.Toolset); ok {
		// The toolset ends the span on the call's own goroutine, once
		// the result is in: no goroutine of ours per call.
		return t.inner.Handle(toolset.WithAfter(ctx, end), call)
	}
	p := t.inner.Handle(ctx, call)
	go func() { end(p.Result()) }()
	return p
}

// statusOK is the status attribute of a call that went well.
var statusOK = attribute.String(attrToolStatus, "ok")

// toolAttrs are what every execute_tool span and measure of one tool
// share, made once per tool: the span's name and attributes, and the
// duration metric's attributes of a call that went well.
type toolAttrs struct {
	name string
	span []attribute.KeyValue
	ok   metric.RecordOption
}

type attrKey struct{ name, source string }

// attrsOf is the shared attributes of tool name, from its source as find
// says.
func (t *tools) attrsOf(name string) *toolAttrs {
	key := attrKey{name: name}
	if t.find != nil {
		if tool, ok := t.find(name); ok {
			key.source = tool.Spec().Source
		}
	}
	if v, ok := t.attrs.Load(key); ok {
		return v.(*toolAttrs)
	}
	ta := &toolAttrs{name: "execute_tool " + name, span: []attribute.KeyValue{attribute.String(attrOperation, "execute_tool"),
		attribute.String(attrToolName, name), attribute.String(attrToolType, "function")},
		ok: metric.WithAttributeSet(attribute.NewSet(attribute.String(attrOperation, "execute_tool"), attribute.String(attrToolName, name)))}
	if key.source != "" {
		ta.span = append(ta.span, attribute.String(attrToolSource, key.source))
	}
	v, _ := t.attrs.LoadOrStore(key, ta)
	return v.(*toolAttrs)
}

// Decider is d with each decision recorded as an event of its call's
// execute_tool span (with the time the approval waited); d itself when
// telemetry is off.
func Decider(d approval.Decider) approval.Decider {
	if current.Load() == nil {
		return d
	}
	return approval.DeciderFunc(func(ctx context.Context, req approval.Request) (approval.Decision, error) {
		start := time.Now()
		dec, err := d.Decide(ctx, req)
		span := trace.SpanFromContext(ctx)
		if v, ok := calls.Load(req.ToolCallID); ok {
			span = v.(trace.Span)
		}
		if span.IsRecording() {
			span.AddEvent("gen_ai.tool.approval", trace.WithAttributes(
				attribute.Bool("kosong.approval.approved", dec.Approved && err == nil),
				attribute.String("kosong.approval.action", req.Action),
				attribute.String("kosong.approval.plugin", req.Plugin),
				attribute.Float64("kosong.approval.wait_seconds", time.Since(start).Seconds())))
		}
		return dec, err
	})
}

// Plugin records on the call's execute_tool span (in ctx) the plugin
// that runs it and the process id (0: a remote tool server), and returns
// the trace context to send with the call (nil when there is none).
func Plugin(ctx context.Context, name string, pid int) map[string]string {
	span := trace.SpanFromContext(ctx)
	if !span.SpanContext().IsValid() {
		return nil
	}
	if span.IsRecording() {
		if pid > 0 {
			span.SetAttributes(attribute.String(attrPlugin, name), attribute.Int(attrPluginPID, pid))
		} else {
			span.SetAttributes(attribute.String(attrPlugin, name))
		}
	}
	return Carrier(ctx)
}

// MCP records on the call's span the MCP server that runs it, and returns
// the trace context to send as the request's params._meta (nil: none).
func MCP(ctx context.Context, server string) map[string]string {
	span := trace.SpanFromContext(ctx)
	if !span.SpanContext().IsValid() {
		return nil
	}
	if span.IsRecording() {
		span.SetAttributes(attribute.String(attrMCPServer, server))
	}
	return Carrier(ctx)
}

// Carrier is the W3C trace context of ctx (traceparent and, when there
// is one, tracestate); nil when ctx has no span.
func Carrier(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	m := propagation.MapCarrier{}
	propagator.Inject(ctx, m)
	return m
}

// Env is the trace context of ctx as TRACEPARENT and TRACESTATE
// variables for a command or hook (nil when ctx has no span).
func Env(ctx context.Context) []string {
	m := Carrier(ctx)
	if m == nil {
		return nil
	}
	env := []string{"TRACEPARENT=" + m["traceparent"]}
	if ts := m["tracestate"]; ts != "" {
		env = append(env, "TRACESTATE="+ts)
	}
	return env
}

// kindName is how a tool call ended: ok, error, rejected.
func kindName(r toolset.Result) string {
	switch r.Kind {
	case toolset.Ok:
		return "ok"
	case toolset.Rejected:
		return "rejected"
	}
	return "error"
}
