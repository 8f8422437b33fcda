package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolve: the policy's forced endpoint wins over everything, then
// OTEL_SDK_DISABLED, then the OTEL_* variables, then the configuration
// file.
func TestResolve(t *testing.T) {
	tests := []struct {
		name         string
		env          map[string]string
		opts         Options
		wantOn       bool
		wantEndpoint string // "": the exporter reads OTEL_EXPORTER_OTLP_TRACES_ENDPOINT itself
		wantProtocol string
	}{
		{name: "nothing", wantOn: false},
		{name: "file", opts: Options{Endpoint: "http://file:4318", Protocol: "grpc"}, wantOn: true, wantEndpoint: "http://file:4318", wantProtocol: "grpc"},
		{name: "variables win over the file", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
			opts: Options{Endpoint: "http://file:4318", Protocol: "grpc"}, wantOn: true, wantEndpoint: "http://env:4318", wantProtocol: "http/protobuf"},
		{name: "traces variable", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env:4318/v1/traces"},
			opts: Options{Endpoint: "http://file:4318"}, wantOn: true, wantEndpoint: "", wantProtocol: "http/protobuf"},
		{name: "disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318"},
			opts: Options{Endpoint: "http://file:4318"}, wantOn: false},
		{name: "forced wins over the variables and the file", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4318"},
			opts: Options{Endpoint: "http://file:4318", ForcedEndpoint: "http://policy:4318"}, wantOn: true, wantEndpoint: "http://policy:4318", wantProtocol: "http/protobuf"},
		{name: "forced wins over disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true"},
			opts: Options{ForcedEndpoint: "http://policy:4318"}, wantOn: true, wantEndpoint: "http://policy:4318", wantProtocol: "http/protobuf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			on, endpoint, protocol, err := resolve(tt.opts, func(k string) string { return tt.env[k] })
			if err != nil || on != tt.wantOn || (on && (endpoint != tt.wantEndpoint || protocol != tt.wantProtocol)) {
				t.Fatalf("on %v endpoint %q protocol %q err %v", on, endpoint, protocol, err)
			}
		})
	}
	env := pluginEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://env:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}[k]
	}, "http://policy:4318", "http/protobuf", true)
	if got := strings.Join(env, " "); strings.Contains(got, "env:4318") || !strings.Contains(got, "OTEL_EXPORTER_OTLP_ENDPOINT=http://policy:4318") ||
		!strings.Contains(got, "OTEL_EXPORTER_OTLP_HEADERS=a=b") {
		t.Fatalf("a plugin's environment under a forced endpoint: %s", got)
	}
}

// TestFileConfig: the telemetry block is read alone; its mistakes are
// one-line errors naming the file, line and key; a file without it, or
// a missing file, has none.
func TestFileConfig(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    FileConfig
		wantErr string
	}{
		{name: "full", data: "providers: {}\ntelemetry:\n  endpoint: http://127.0.0.1:4318\n  protocol: grpc\n  service_name: svc\n" +
			"  resource_attributes: {team: blue}\n  capture_content: true\n",
			want: FileConfig{Endpoint: "http://127.0.0.1:4318", Protocol: "grpc", ServiceName: "svc", ResourceAttributes: map[string]string{"team": "blue"}, CaptureContent: true}},
		{name: "none", data: "providers: {}\n"},
		{name: "broken elsewhere", data: "providers: [\n"},
		{name: "unknown key", data: "telemetry:\n  endpont: http://x\n", wantErr: `line 2: telemetry.endpont: unknown key`},
		{name: "not a URL", data: "telemetry:\n  endpoint: 127.0.0.1:4318\n", wantErr: `line 2: telemetry.endpoint: "127.0.0.1:4318" is not a URL`},
		{name: "protocol", data: "telemetry:\n  protocol: thrift\n", wantErr: `telemetry.protocol: "thrift": want grpc or http/protobuf`},
		{name: "capture not a bool", data: "telemetry:\n  capture_content: yes please\n", wantErr: `telemetry.capture_content: want true or false`},
		{name: "attributes not a mapping", data: "telemetry:\n  resource_attributes: [a]\n", wantErr: `telemetry.resource_attributes: want a mapping`},
		{name: "not a mapping", data: "telemetry: on\n", wantErr: `line 1: telemetry: want a mapping`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := LoadFileConfig(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v, want one line with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.Endpoint != tt.want.Endpoint || got.Protocol != tt.want.Protocol || got.ServiceName != tt.want.ServiceName ||
				got.CaptureContent != tt.want.CaptureContent || len(got.ResourceAttributes) != len(tt.want.ResourceAttributes) {
				t.Fatalf("got %+v err %v", got, err)
			}
		})
	}
	if fc, err := LoadFileConfig(filepath.Join(t.TempDir(), "missing.yaml")); err != nil || fc.Endpoint != "" {
		t.Fatalf("a missing file: %+v %v", fc, err)
	}
}
