// Package telemetry is the host's OpenTelemetry: traces and metrics that
// follow the GenAI semantic conventions (invoke_agent per turn, chat per
// model request, execute_tool per tool call), exported over OTLP.
//
// It is off by default and then costs nothing: Setup installs no exporter
// and the wrappers (Provider, Toolset, Decider, StartTurn) hand back what
// they were given, so the loop runs exactly as without telemetry. It is on
// when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) variable is set, or the
// configuration file gives an endpoint; OTEL_SDK_DISABLED=true turns it
// off whatever else is set.
//
// Nothing outside this package imports the OpenTelemetry SDK: the loop and
// the conversation see the wrappers, plugins and MCP servers see the trace
// context (Carrier, Env).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Options say how to set telemetry up.
type Options struct {
	// Getenv reads the OTEL_* variables; nil: os.Getenv.
	Getenv func(string) string
	// ServiceName is service.name when OTEL_SERVICE_NAME does not say;
	// "": "kosong-host".
	ServiceName string
	// Endpoint is the OTLP endpoint of the configuration file (a URL),
	// used when no OTEL_EXPORTER_OTLP_*ENDPOINT variable is set.
	Endpoint string
	// Protocol is the configuration file's OTLP protocol ("grpc" or
	// "http/protobuf"), used when OTEL_EXPORTER_OTLP_PROTOCOL is unset.
	Protocol string
	// CaptureContent records arguments, results and message contents
	// (also on with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).
	CaptureContent bool
	// ResourceAttributes are the configuration file's resource
	// attributes; OTEL_RESOURCE_ATTRIBUTES wins for a key it also sets.
	ResourceAttributes map[string]string
	// ForcedEndpoint is the admin policy's forced.telemetry_endpoint: it
	// turns telemetry on at that endpoint whatever the variables
	// (OTEL_SDK_DISABLED and OTEL_EXPORTER_OTLP_*ENDPOINT included) and
	// the configuration file say.
	ForcedEndpoint string
}

// ContentEnv opts in to recording arguments, results and message
// contents in spans (the name other GenAI instrumentations use).
const ContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// scope names the instrumentation.
const scope = "github.com/kosong-host/kosong-host"

// state is what Setup installed; nil while telemetry is off.
type state struct {
	tracer   trace.Tracer
	contents bool
	// The metrics.
	tokens, opDuration, toolDuration metric.Float64Histogram
	restarts                         metric.Int64Counter
	// env is what a plugin process inherits (PluginEnv).
	env []string
}

var current atomic.Pointer[state]

// Enabled reports whether telemetry is on.
func Enabled() bool { return current.Load() != nil }

// Contents reports whether contents are recorded (the opt-in).
func Contents() bool {
	s := current.Load()
	return s != nil && s.contents
}

// propagator is W3C trace context: what goes to plugins, MCP servers,
// commands and hooks.
var propagator = propagation.TraceContext{}

// Setup turns telemetry on when the environment or opts give an
// endpoint, and returns the function that flushes and stops it (a no-op
// when off). A bad setting (an unknown protocol, an endpoint that is not a
// URL) is an error naming it.
func Setup(ctx context.Context, opts Options) (shutdown func(context.Context) error, err error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	nothing := func(context.Context) error { return nil }
	on, endpoint, protocol, err := resolve(opts, getenv)
	if err != nil || !on {
		return nothing, err
	}
	service := opts.ServiceName
	if service == "" {
		service = "kosong-host"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", service)}
	for _, k := range sortedAttrs(opts.ResourceAttributes) {
		attrs = append(attrs, attribute.String(k, opts.ResourceAttributes[k]))
	}
	// resource.WithFromEnv comes last: OTEL_SERVICE_NAME and
	// OTEL_RESOURCE_ATTRIBUTES win over the file's.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...), resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	spanExp, err := traceExporter(ctx, protocol, endpoint)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spanExp), sdktrace.WithResource(res))
	var mp *sdkmetric.MeterProvider
	if getenv("OTEL_METRICS_EXPORTER") != "none" {
		metricExp, err := metricExporter(ctx, protocol, endpoint)
		if err != nil {
			_ = tp.Shutdown(ctx)
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp)), sdkmetric.WithResource(res))
	}
	contents := opts.CaptureContent || strings.EqualFold(getenv(ContentEnv), "true")
	env := pluginEnv(getenv, endpoint, protocol, opts.ForcedEndpoint != "")
	if getenv("OTEL_RESOURCE_ATTRIBUTES") == "" && len(opts.ResourceAttributes) > 0 {
		var kv []string
		for _, k := range sortedAttrs(opts.ResourceAttributes) {
			kv = append(kv, k+"="+opts.ResourceAttributes[k])
		}
		env = append(env, "OTEL_RESOURCE_ATTRIBUTES="+strings.Join(kv, ","))
	}
	if err := install(tp, mp, contents, env); err != nil {
		_ = tp.Shutdown(ctx)
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	return func(ctx context.Context) error {
		current.Store(nil)
		err := tp.Shutdown(ctx)
		if mp != nil {
			err = errors.Join(err, mp.Shutdown(ctx))
		}
		return err
	}, nil
}

// resolve decides whether telemetry is on and where it sends: the
// policy's forced endpoint first (always on); else OTEL_SDK_DISABLED=true
// is off; else an OTEL_EXPORTER_OTLP_*ENDPOINT variable (the generic one given
// to the exporter, a traces-only one read by it), else the file's endpoint.
// The protocol: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL,
// the file's, else http/protobuf.
func resolve(opts Options, getenv func(string) string) (on bool, endpoint, protocol string, err error) {
	forced := opts.ForcedEndpoint != ""
	if !forced && strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, "", "", nil
	}
	endpointEnv := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	switch {
	case forced:
		endpoint = opts.ForcedEndpoint
	case endpointEnv:
		// Given to the exporter as read through getenv (Options.Getenv,
		// which the exporter's own reading of the process's environment
		// would miss); a traces-only endpoint the exporter reads itself.
		if getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			endpoint = getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		}
	case opts.Endpoint != "":
		endpoint = opts.Endpoint
	default:
		return false, "", "", nil
	}
	protocol = getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if protocol == "" {
		protocol = opts.Protocol
	}
	if protocol == "" {
		protocol = "http/protobuf" // the specification's default
	}
	if protocol != "grpc" && protocol != "http/protobuf" {
		return false, "", "", fmt.Errorf("telemetry: OTLP protocol %q: want grpc or http/protobuf", protocol)
	}
	if endpoint != "" && !strings.Contains(endpoint, "://") {
		return false, "", "", fmt.Errorf("telemetry: endpoint %q is not a URL (e.g. http://127.0.0.1:4318)", endpoint)
	}
	return true, endpoint, protocol, nil
}

// install makes tp (and mp, when not nil) the providers of the process
// and turns the wrappers on.
func install(tp *sdktrace.TracerProvider, mp *sdkmetric.MeterProvider, contents bool, env []string) error {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	otel.SetTracerProvider(tp)
	s := &state{tracer: tp.Tracer(scope), env: env, contents: contents}
	if s.contents {
		s.env = append(s.env, ContentEnv+"=true")
	}
	var meter metric.Meter
	if mp != nil {
		otel.SetMeterProvider(mp)
		meter = mp.Meter(scope)
	} else {
		meter = otel.GetMeterProvider().Meter(scope)
	}
	if err := s.instruments(meter); err != nil {
		return err
	}
	current.Store(s)
	return nil
}

func traceExporter(ctx context.Context, protocol, endpoint string) (sdktrace.SpanExporter, error) {
	if protocol == "grpc" {
		var o []otlptracegrpc.Option
		if endpoint != "" {
			o = append(o, otlptracegrpc.WithEndpointURL(endpoint))
		}
		return otlptracegrpc.New(ctx, o...)
	}
	var o []otlptracehttp.Option
	if endpoint != "" {
		o = append(o, otlptracehttp.WithEndpointURL(strings.TrimSuffix(endpoint, "/")+"/v1/traces"))
	}
	return otlptracehttp.New(ctx, o...)
}

func metricExporter(ctx context.Context, protocol, endpoint string) (sdkmetric.Exporter, error) {
	if protocol == "grpc" {
		var o []otlpmetricgrpc.Option
		if endpoint != "" {
			o = append(o, otlpmetricgrpc.WithEndpointURL(endpoint))
		}
		return otlpmetricgrpc.New(ctx, o...)
	}
	var o []otlpmetrichttp.Option
	if endpoint != "" {
		o = append(o, otlpmetrichttp.WithEndpointURL(strings.TrimSuffix(endpoint, "/")+"/v1/metrics"))
	}
	return otlpmetrichttp.New(ctx, o...)
}

// pluginEnv is the OTEL_* settings a plugin process inherits, so a plugin
// exports its own spans to the same place (under its own service name).
func pluginEnv(getenv func(string) string, endpoint, protocol string, forced bool) []string {
	var env []string
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_INSECURE",
		"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_BSP_SCHEDULE_DELAY", "OTEL_TRACES_SAMPLER",
		"OTEL_TRACES_SAMPLER_ARG"} {
		if v := getenv(k); v != "" && !(forced && strings.HasSuffix(k, "ENDPOINT")) {
			env = append(env, k+"="+v)
		}
	}
	if endpoint != "" {
		env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint)
	}
	return append(env, "OTEL_EXPORTER_OTLP_PROTOCOL="+protocol, "OTEL_METRICS_EXPORTER=none")
}

// PluginEnv is what a plugin process's environment gets while telemetry
// is on (nil when off): the OTEL_* settings of the exporter.
func PluginEnv() []string {
	s := current.Load()
	if s == nil {
		return nil
	}
	return s.env
}

func (s *state) instruments(m metric.Meter) error {
	var err, e error
	s.tokens, e = m.Float64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used"),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864))
	err = errors.Join(err, e)
	s.opDuration, e = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration"),
		metric.WithExplicitBucketBoundaries(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
	err = errors.Join(err, e)
	s.toolDuration, e = m.Float64Histogram("gen_ai.execute_tool.duration", metric.WithUnit("s"),
		metric.WithDescription("Tool call duration"),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300))
	err = errors.Join(err, e)
	s.restarts, e = m.Int64Counter("kosong.plugin.restarts", metric.WithUnit("{restart}"),
		metric.WithDescription("Plugin processes restarted after a crash"))
	return errors.Join(err, e)
}

// PluginRestarted counts a restart of the named plugin's process.
func PluginRestarted(ctx context.Context, plugin string) {
	if s := current.Load(); s != nil {
		s.restarts.Add(ctx, 1, metric.WithAttributes(attribute.String("kosong.plugin.name", plugin)))
	}
}

// since is the seconds from start to now.
func since(start time.Time) float64 { return time.Since(start).Seconds() }
