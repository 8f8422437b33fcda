//go:build unix

package bench

import (
	"context"
	"testing"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// BenchmarkRoundTripVsMCP: Handle -> Echo plugin -> result beside Handle ->
// echo tool of the stdio MCP test server -> result, in the same run, in
// turns of 100 calls, so the drift of a shared machine hits both alike.
// Targets: plugin/MCP at most 0.5 at p50 and 0.25 at p99.
func BenchmarkRoundTripVsMCP(b *testing.B) {
	path, _ := echoAgent(b)
	ctx := context.Background()
	a, err := agent.Load(ctx, path, agent.Options{WorkDir: b.TempDir(), StateDir: b.TempDir(), Decider: approval.Yolo{}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	srv, err := testbin.Build("host/testdata/mcpserver", "mcpserver")
	if err != nil {
		b.Fatal(err)
	}
	l := mcpclient.LoadAll(ctx, []spec.MCPServer{{Name: "b", Command: srv, Prefix: true, EnabledTools: []string{"echo"}}},
		mcpclient.Options{Decider: approval.Yolo{}})
	defer l.Close()
	if len(l.Servers) != 1 {
		b.Fatalf("MCP server start: %v", l.Status[0].Err)
	}
	mcp := toolset.New(nil)
	if err := mcp.Add(l.Servers[0].Tools()[0]); err != nil {
		b.Fatal(err)
	}
	call := func(ts *toolset.Toolset, name string) func() {
		return func() {
			r := ts.Handle(ctx, providers.ToolCall{ID: "c", Name: name, Arguments: `{"text":"hello"}`}).Result()
			if r.IsError() || r.OutputText() != "hello" {
				b.Fatalf("%s: %+v", name, r)
			}
		}
	}
	b.ResetTimer()
	got := measureInterleaved(call(a.Toolset, "Echo"), call(mcp, "b__echo"))
	b.StopTimer()
	pl, mc := got[0], got[1]
	p50, p99 := float64(pl[0])/float64(mc[0]), float64(pl[1])/float64(mc[1])
	b.ReportMetric(us(pl[0]), "plugin-p50-us")
	b.ReportMetric(us(pl[1]), "plugin-p99-us")
	b.ReportMetric(us(mc[0]), "mcp-p50-us")
	b.ReportMetric(us(mc[1]), "mcp-p99-us")
	b.ReportMetric(p50, "plugin/mcp-p50")
	b.ReportMetric(p99, "plugin/mcp-p99")
	b.Logf("echo round trip, Handle -> tool -> result, %d calls each in turns of 100 (p50 / p99):", calls)
	b.Logf("  plugin (go-plugin gRPC, mTLS) : %8.1f / %8.1f us", us(pl[0]), us(pl[1]))
	b.Logf("  MCP stdio server              : %8.1f / %8.1f us", us(mc[0]), us(mc[1]))
	b.Logf("  plugin / MCP: p50 %.2f (target <= 0.5), p99 %.2f (target <= 0.25)", p50, p99)
}
