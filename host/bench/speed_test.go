//go:build unix

package bench

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/plugin"
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

// defaultAgentPlugins are the plugins of agents/default/agent.yaml.
var defaultAgentPlugins = []string{"shell", "file", "web", "todo", "think"}

// hostBinary is bin/kosong-host when `make build` made it (what `make
// bench` runs), else the host built for the test.
func hostBinary(b *testing.B) string {
	if p := filepath.Join(testbin.Root(), "bin", "kosong-host"); fileExists(p) {
		return p
	}
	p, err := testbin.Build("cmd/kosong-host", "kosong-host")
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// BenchmarkParallelStart: the default agent's plugins, as built-ins (the
// host binary run with `plugin-serve NAME`), each started alone (launch,
// Describe, Load of its tools) and all started in parallel, in turns.
// Target: parallel at most 1.2x the optimum, N / cores x one start (the
// starts alone, summed, over the cores).
func BenchmarkParallelStart(b *testing.B) {
	host := hostBinary(b)
	specs := make([]plugin.Spec, len(defaultAgentPlugins))
	for i, name := range defaultAgentPlugins {
		specs[i] = plugin.Spec{Config: plugin.Config{Name: name, Path: host, Args: []string{"plugin-serve", name}, Builtin: true}}
	}
	opts := func() plugin.Options {
		return plugin.Options{WorkDir: b.TempDir(), StateDir: b.TempDir(), Decider: approval.Deny{}}
	}
	start := func(specs ...plugin.Spec) time.Duration {
		o := opts()
		t0 := time.Now()
		l := plugin.Load(context.Background(), specs, o)
		d := time.Since(t0)
		if len(l.Failures) > 0 {
			b.Fatalf("start: %v", l.Failures)
		}
		l.Close()
		return d
	}
	for _, sp := range specs { // warm up: page cache, first handshakes
		start(sp)
	}
	const rounds = 15
	var alone, par, ratios []time.Duration
	var cpu time.Duration
	b.ResetTimer()
	for range rounds {
		var sum time.Duration
		c0 := cpuTime()
		for _, sp := range specs {
			sum += start(sp)
		}
		cpu += cpuTime() - c0
		p := start(specs...)
		alone, par = append(alone, sum), append(par, p)
		ratios = append(ratios, p*1000/(sum/time.Duration(runtime.NumCPU())))
	}
	b.StopTimer()
	sumP50, _ := percentiles(alone)
	parP50, _ := percentiles(par)
	ratio, _ := percentiles(ratios)
	cores := runtime.NumCPU()
	b.ReportMetric(ms(sumP50)/float64(len(specs)), "start-one-ms")
	b.ReportMetric(ms(parP50), "start-parallel-ms")
	b.ReportMetric(float64(ratio)/1000, "parallel/optimum")
	b.Logf("start of the default agent's %d plugins as built-ins (%s), launch + Describe + Load, %d rounds in turns (medians):",
		len(specs), filepath.Base(host), rounds)
	b.Logf("  each alone, summed : %6.1f ms (%.1f ms a plugin; CPU of host and plugin, start and stop: %.1f ms a plugin)",
		ms(sumP50), ms(sumP50)/float64(len(specs)), ms(cpu/time.Duration(rounds*len(specs))))
	b.Logf("  all in parallel    : %6.1f ms", ms(parP50))
	b.Logf("  parallel / optimum (summed / %d cores): %.2f (median of the rounds' ratios; target <= 1.2)", cores, float64(ratio)/1000)
}
