package main_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// otlpReceiver is an OTLP/HTTP receiver that keeps what it is sent.
type otlpReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	traces int
	bodies bytes.Buffer
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		if req.URL.Path == "/v1/traces" {
			r.traces++
		}
		r.bodies.Write(body)
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) got() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.traces, r.bodies.String()
}

// TestTelemetryFromConfigAndPolicy: the configuration file's telemetry
// block turns tracing on with its service name and resource attributes;
// the OTEL_* variables win over it; the admin policy's forced endpoint
// wins over both (OTEL_SDK_DISABLED too).
func TestTelemetryFromConfigAndPolicy(t *testing.T) {
	tests := []struct {
		name string
		// env and the config's endpoint get "FILE", "ENV", "POLICY"
		// replaced with the receivers' URLs.
		env         []string
		viaFlag     bool
		policy      bool
		want        string // the receiver that gets the traces
		wantService string
		notService  string
	}{
		{name: "configuration file", want: "FILE", wantService: "svc-from-file"},
		{name: "variables win", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=ENV", "OTEL_SERVICE_NAME=svc-from-env"}, viaFlag: true,
			want: "ENV", wantService: "svc-from-env", notService: "svc-from-file"},
		{name: "policy wins", env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=ENV", "OTEL_SDK_DISABLED=true"}, viaFlag: true, policy: true,
			want: "POLICY", wantService: "svc-from-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recv := map[string]*otlpReceiver{"FILE": newOTLPReceiver(t), "ENV": newOTLPReceiver(t), "POLICY": newOTLPReceiver(t)}
			url := func(s string) string {
				for k, r := range recv {
					s = strings.ReplaceAll(s, k, r.URL)
				}
				return s
			}
			cfgYAML := "telemetry:\n  endpoint: " + recv["FILE"].URL + "\n  service_name: svc-from-file\n  resource_attributes: {team: team-from-file}\n"
			dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi", "script.yaml": "turns:\n  - text: Hello.\n",
				"cfg/kosong-host/config.yaml": cfgYAML,
				"policy.yaml":                 "forced:\n  telemetry_endpoint: " + recv["POLICY"].URL + "\n"})
			var env []string
			for _, e := range tt.env {
				env = append(env, url(e))
			}
			args := []string{"run", "--provider", "scripted", "--script", "script.yaml", "-p", "go"}
			if tt.viaFlag {
				args = append(args, "--config", filepath.Join(dir, "cfg", "kosong-host", "config.yaml"))
			} else {
				env = append(env, "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"))
			}
			if tt.policy {
				env = append(env, "KOSONG_HOST_POLICY="+filepath.Join(dir, "policy.yaml"))
			}
			r := runHostEnv(t, dir, env, "", args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			for name, rc := range recv {
				n, body := rc.got()
				if name != tt.want {
					if n != 0 {
						t.Errorf("%s got %d trace requests", name, n)
					}
					continue
				}
				if n == 0 || !strings.Contains(body, tt.wantService) || !strings.Contains(body, "invoke_agent") {
					t.Fatalf("%s got %d trace requests; service %q in them: %v", name, n, tt.wantService, strings.Contains(body, tt.wantService))
				}
				if tt.notService != "" && strings.Contains(body, tt.notService) {
					t.Errorf("the file's service name %q was sent", tt.notService)
				}
				if !tt.viaFlag && !strings.Contains(body, "team-from-file") {
					t.Errorf("the file's resource attribute was not sent")
				}
			}
		})
	}
	t.Run("bad block", func(t *testing.T) {
		dir := writeFiles(t, map[string]string{"config.yaml": "telemetry:\n  protocol: thrift\n"})
		r := runHostEnv(t, dir, nil, "", "run", "--config", filepath.Join(dir, "config.yaml"), "-p", "go")
		if r.code != 2 || !strings.Contains(r.stderr, "telemetry.protocol") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
	})
}
