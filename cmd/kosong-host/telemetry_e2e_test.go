package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/testcomponent"
)

// jaeger is a Jaeger started by a test: OTLP over HTTP in, the query API
// out, traces in memory.
type jaeger struct {
	otlp  string // http://127.0.0.1:PORT
	query string // http://127.0.0.1:PORT
}

// freePort is a port on 127.0.0.1 nothing listens on (now).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startJaeger builds Jaeger v1.76.0 (once per machine, see
// host/testcomponent) and starts it on free ports of 127.0.0.1; it stops
// with the test.
func startJaeger(t *testing.T) jaeger {
	t.Helper()
	bin := testcomponent.Need(t, "github.com/jaegertracing/jaeger", "v1.76.0", "cmd/jaeger", "jaeger")
	otlp, query, queryGRPC := freePort(t), freePort(t), freePort(t)
	config := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`, query, queryGRPC, otlp)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(dir, "jaeger.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		logf.Close()
	})
	j := jaeger{otlp: fmt.Sprintf("http://127.0.0.1:%d", otlp), query: fmt.Sprintf("http://127.0.0.1:%d", query)}
	poll(t, 60*time.Second, func() bool {
		select {
		case <-exited:
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("jaeger exited: %s", b)
		default:
		}
		resp, err := http.Get(j.query + "/api/services")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return j
}

// poll calls ok every 50 ms until it says true, and fails the test when
// within passes first.
func poll(t *testing.T, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not so within %s", within)
		}
		<-tick.C
	}
}

// jaegerTrace is a trace as Jaeger's query API returns it.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		ProcessID     string `json:"processID"`
		References    []struct {
			RefType string `json:"refType"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		Tags []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"tags"`
	} `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// traces are the traces of service in j.
func (j jaeger) traces(t *testing.T, service string) []jaegerTrace {
	t.Helper()
	resp, err := http.Get(j.query + "/api/traces?limit=20&service=" + service)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Data []jaegerTrace }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

// tree is the trace as indented lines "NAME [SERVICE]", children in
// the order of their names; ids maps each span's name to its id.
func (tr jaegerTrace) tree() (string, map[string]string) {
	children := map[string][]int{}
	ids := map[string]string{}
	var roots []int
	for i, s := range tr.Spans {
		ids[s.OperationName] = s.SpanID
		parent := ""
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" {
				parent = r.SpanID
			}
		}
		if parent == "" {
			roots = append(roots, i)
		} else {
			children[parent] = append(children[parent], i)
		}
	}
	var b strings.Builder
	var walk func(i, depth int)
	walk = func(i, depth int) {
		s := tr.Spans[i]
		fmt.Fprintf(&b, "%s%s [%s]\n", strings.Repeat("  ", depth), s.OperationName, tr.Processes[s.ProcessID].ServiceName)
		kids := children[s.SpanID]
		sortBy(kids, func(k int) string { return tr.Spans[k].OperationName })
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String(), ids
}

func sortBy(xs []int, key func(int) string) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && key(xs[j]) < key(xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// mcpAgentWith is an agent with the Shell tool and the given tools of the
// test MCP server.
func mcpAgentWith(t *testing.T, tools ...string) string {
	return fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools: ["shell:Shell"]
  mcp_servers:
    test:
      command: %q
      enabled_tools: [%s]
`, mcpTestServer(t), strings.Join(tools, ", "))
}

// TestTraceInJaeger: a scripted session with a Shell call and an MCP call,
// traced into a real Jaeger, is one trace: invoke_agent over the model's
// chat spans and the execute_tool spans; under execute_tool Shell the span
// the Shell plugin's own process made; the MCP server saw the traceparent
// of its execute_tool span. No argument text is in any span without the
// opt-in.
func TestTraceInJaeger(t *testing.T) {
	j := startJaeger(t)
	dir := writeFiles(t, map[string]string{"agent.yaml": mcpAgentWith(t, "env"), "s.md": "hi", "script.yaml": `
turns:
  - tool_calls:
      - {id: c1, name: Shell, arguments: {command: "echo secret-argument-text"}}
  - tool_calls:
      - {id: c2, name: test__env, arguments: {names: [NONE]}}
  - text: "Done."
`})
	service := fmt.Sprintf("kosong-e2e-%d", time.Now().UnixNano())
	r := runHostEnv(t, dir, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + j.otlp, "OTEL_SERVICE_NAME=" + service,
		"OTEL_BSP_SCHEDULE_DELAY=100"},
		"", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "--output-format", "stream-json", "-p", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var mcpOut string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct{ Type, ID, Output string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "tool_result" && ev.ID == "c2" {
			for _, l := range strings.Split(ev.Output, "\n") {
				if strings.HasPrefix(l, "_meta.traceparent=") {
					mcpOut = l
				}
			}
		}
	}
	var tr jaegerTrace
	poll(t, 60*time.Second, func() bool {
		ts := j.traces(t, service)
		if len(ts) != 1 {
			return false
		}
		tr = ts[0]
		for _, s := range tr.Spans {
			if s.OperationName == "shell command" {
				return true
			}
		}
		return false
	})
	tree, ids := tr.tree()
	want := fmt.Sprintf(`invoke_agent t [%[1]s]
  chat script:script.yaml [%[1]s]
  chat script:script.yaml [%[1]s]
  chat script:script.yaml [%[1]s]
  execute_tool Shell [%[1]s]
    shell command [kosong-host plugin shell]
  execute_tool test__env [%[1]s]
`, service)
	if tree != want {
		t.Errorf("trace tree:\n%s\nwant:\n%s", tree, want)
	}
	if wantTP := fmt.Sprintf("_meta.traceparent=00-%s-%s-01", tr.TraceID, ids["execute_tool test__env"]); mcpOut != wantTP {
		t.Errorf("the MCP server saw %q, want %q", mcpOut, wantTP)
	}
	b, _ := json.Marshal(tr)
	if strings.Contains(string(b), "secret-argument-text") {
		t.Errorf("argument text in the trace without the opt-in: %s", b)
	}
}
