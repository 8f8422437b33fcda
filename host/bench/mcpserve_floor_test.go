//go:build unix

package bench

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/mcpserver"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/testcomponent"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// serveEnv names the stdio MCP server the test binary runs as when a
// benchmark starts it as a child process: "gosdk" (an echo tool served by
// the go-sdk alone) or "toolset" (mcpserver over a toolset whose Echo runs
// in process: mcp serve without the plugin hop).
const serveEnv = "KOSONG_BENCH_MCP_SERVE"

// baseHostEnv names another kosong-host binary for BenchmarkMCPServeFloor
// to measure beside the one under test.
const baseHostEnv = "KOSONG_BENCH_BASE_HOST"

// serveChild runs the server serveEnv names, if any, and reports whether
// it did.
func serveChild() bool {
	kind := os.Getenv(serveEnv)
	if kind == "" {
		return false
	}
	debug.SetGCPercent(400) // as mcp serve
	ctx := context.Background()
	var err error
	switch kind {
	case "gosdk":
		s := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
		type args struct {
			Text string `json:"text"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "Echo", Description: "Echo the given text back."},
			func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
			})
		err = s.Run(ctx, &mcpserver.StdioTransport{})
	case "toolset":
		ts := toolset.New(nil)
		if err := ts.Add(inProcessEcho{}); err != nil {
			panic(err)
		}
		err = mcpserver.New(ts, mcpserver.NewApprovals(true), mcpserver.Options{}).Run(ctx, &mcpserver.StdioTransport{})
	default:
		panic("unknown " + serveEnv + " " + kind)
	}
	if err != nil {
		os.Exit(1)
	}
	return true
}

// inProcessEcho is the Echo tool, run in the host's process.
type inProcessEcho struct{}

func (inProcessEcho) Spec() toolset.Spec {
	return toolset.Spec{Name: "Echo", Description: "Echo the given text back, unchanged.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)}
}

func (inProcessEcho) Call(_ context.Context, _ string, args json.RawMessage) toolset.Result {
	var p struct{ Text string }
	if err := json.Unmarshal(args, &p); err != nil {
		return toolset.RuntimeError(err)
	}
	return toolset.Result{Kind: toolset.Ok, Output: []providers.ContentPart{providers.TextPart(p.Text)}, Brief: "echoed"}
}

// BenchmarkMCPServeFloor: the echo call of BenchmarkMCPServeVsReference
// through four stdio servers, interleaved in turns of 100 calls: `mcp
// serve` with the Echo plugin; mcpserver over a toolset whose Echo runs in
// process (mcp serve without the plugin hop); the go-sdk alone with an
// in-process echo tool (the floor of a go-sdk server); and the reference
// server. It places the time of mcp serve: the plugin hop is the first
// less the second, the host's MCP layer the second less the third.
func BenchmarkMCPServeFloor(b *testing.B) {
	dir, err := testcomponent.NpmPackage(referenceMCPServer, referenceMCPVersion)
	if err != nil {
		testcomponent.Missing(b, err)
	}
	agentPath, _ := echoAgent(b)
	home := b.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_STATE_HOME": filepath.Join(home, "state")}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	child := func(kind string) map[string]string {
		e := map[string]string{serveEnv: kind}
		for k, v := range env {
			e[k] = v
		}
		return e
	}
	ctx := context.Background()
	host := hostBinary(b)
	ts := toolset.New(nil)
	call := func(name, args, want string) func() {
		return func() {
			r := ts.Handle(ctx, providers.ToolCall{ID: "c", Name: name, Arguments: args}).Result()
			if r.IsError() || r.OutputText() != want {
				b.Fatalf("%s: %+v", name, r)
			}
		}
	}
	servers := []spec.MCPServer{
		{Name: "ours", Command: host, Args: []string{"--agent", agentPath, "mcp", "serve", "--yolo"}, Env: env, Prefix: true, EnabledTools: []string{"Echo"}},
		{Name: "toolset", Command: self, Env: child("toolset"), Prefix: true, EnabledTools: []string{"Echo"}},
		{Name: "gosdk", Command: self, Env: child("gosdk"), Prefix: true, EnabledTools: []string{"Echo"}},
		{Name: "ref", Command: "node", Args: []string{filepath.Join(dir, "node_modules", referenceMCPServer, "dist", "index.js"), "stdio"}, Env: env, Prefix: true, EnabledTools: []string{"echo"}},
	}
	names := []string{"mcp serve (Echo plugin)", "mcpserver, Echo in process", "go-sdk alone, echo in process", "reference (node)"}
	metrics := []string{"serve", "toolset", "gosdk", "ref"}
	markers := []string{host + " --agent", serveEnv + "=toolset", serveEnv + "=gosdk", referenceMCPServer}
	fns := []func(){call("ours__Echo", `{"text":"hello"}`, "hello"), call("toolset__Echo", `{"text":"hello"}`, "hello"),
		call("gosdk__Echo", `{"text":"hello"}`, "hello"), call("ref__echo", `{"message":"hello"}`, "Echo: hello")}
	// Another build of kosong-host, measured in the same turns: the figures
	// of a change beside those of the build before it.
	if base := os.Getenv(baseHostEnv); base != "" {
		servers = append(servers, spec.MCPServer{Name: "base", Command: base, Args: servers[0].Args, Env: env, Prefix: true, EnabledTools: []string{"Echo"}})
		names = append(names, "mcp serve, "+baseHostEnv)
		metrics = append(metrics, "base")
		markers = append(markers, base+" --agent")
		fns = append(fns, call("base__Echo", `{"text":"hello"}`, "hello"))
	}
	l := mcpclient.LoadAll(ctx, servers, mcpclient.Options{Decider: approval.Yolo{}})
	defer l.Close()
	for _, st := range l.Status {
		if st.Err != nil {
			b.Fatalf("MCP server %s: %v", st.Name, st.Err)
		}
	}
	for _, s := range l.Servers {
		for _, t := range s.Tools() {
			if err := ts.Add(t); err != nil {
				b.Fatal(err)
			}
		}
	}
	pids := make([]int, len(markers))
	before := make([]procUsage, len(markers))
	for i, m := range markers {
		if pids[i] = childServer(m); pids[i] == 0 && runtime.GOOS == "linux" {
			b.Fatalf("no server process with %q", m)
		}
		before[i] = treeUsage(pids[i])
	}
	b.ResetTimer()
	got := measureInterleaved(fns...)
	b.StopTimer()
	used := make([]procUsage, len(markers))
	for i := range markers {
		used[i] = treeUsage(pids[i]).sub(before[i])
	}
	ref := got[3]
	n := float64(calls + 200) // with the warm-up
	b.Logf("MCP stdio echo, %d calls each in turns of 100, p50 / p99 (ratio to the reference); the server's processes: CPU, context switches a call:", calls)
	for i, g := range got {
		cpu := float64(used[i].ticks) * 1e4 / n // ticks of 10 ms, in us
		b.ReportMetric(us(g[0]), metrics[i]+"-p50-us")
		b.ReportMetric(cpu, metrics[i]+"-cpu-us/call")
		b.Logf("  %-40s %8.1f / %8.1f us  (%.2fx / %.2fx)  CPU %6.1f us, %4.1f switches", names[i], us(g[0]), us(g[1]),
			float64(g[0])/float64(ref[0]), float64(g[1])/float64(ref[1]), cpu, float64(used[i].switches)/n)
	}
}
