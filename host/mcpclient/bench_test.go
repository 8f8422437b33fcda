package mcpclient_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

const benchCalls = 10000

func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(d)
	return d[len(d)/2], d[len(d)*99/100]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// BenchmarkMCPEchoRoundTrip: Handle -> MCP echo tool of the stdio test server
// -> result (approval by Yolo, schema validation, JSON-RPC over pipes, content
// mapping), 10,000 sequential calls, beside a direct go-sdk CallTool on the
// same session's tool (no host work). Compare with bench's
// BenchmarkEchoRoundTrip (the Echo plugin over go-plugin gRPC).
func BenchmarkMCPEchoRoundTrip(b *testing.B) {
	ctx := context.Background()
	l := mcpclient.LoadAll(ctx, []spec.MCPServer{{Name: "b", Command: serverBin(b), Prefix: true, EnabledTools: []string{"echo"}}},
		mcpclient.Options{Decider: approval.Yolo{}})
	defer l.Close()
	if len(l.Servers) != 1 {
		b.Fatalf("start: %v", l.Status[0].Err)
	}
	tool := l.Servers[0].Tools()[0]
	ts := toolset.New(nil)
	if err := ts.Add(tool); err != nil {
		b.Fatal(err)
	}
	measure := func(fn func()) (time.Duration, time.Duration) {
		for range 200 { // warm up
			fn()
		}
		d := make([]time.Duration, benchCalls)
		for i := range d {
			start := time.Now()
			fn()
			d[i] = time.Since(start)
		}
		return percentiles(d)
	}
	b.ResetTimer()
	handleP50, handleP99 := measure(func() {
		r := ts.Handle(ctx, providers.ToolCall{ID: "c", Name: "b__echo", Arguments: `{"text":"hello"}`}).Result()
		if r.IsError() || r.OutputText() != "hello" {
			b.Fatalf("%+v", r)
		}
	})
	toolP50, toolP99 := measure(func() {
		if r := tool.Call(ctx, "c", []byte(`{"text":"hello"}`)); r.IsError() {
			b.Fatalf("%+v", r)
		}
	})
	b.StopTimer()
	b.ReportMetric(us(handleP50), "mcp-handle-p50-us")
	b.ReportMetric(us(handleP99), "mcp-handle-p99-us")
	b.ReportMetric(us(toolP50), "mcp-call-p50-us")
	b.Logf("MCP echo round trip over %d sequential calls, stdio test server (p50 / p99):", benchCalls)
	b.Logf("  Handle -> MCP server -> result : %8.1f / %8.1f us", us(handleP50), us(handleP99))
	b.Logf("  Tool.Call (no toolset)         : %8.1f / %8.1f us", us(toolP50), us(toolP99))
}

// BenchmarkMCPStart: starting the stdio test server: process, MCP handshake
// and tools/list, through to a usable toolset (Start + Close per iteration).
func BenchmarkMCPStart(b *testing.B) {
	cfg := spec.MCPServer{Name: "b", Command: serverBin(b), Prefix: true}
	ctx := context.Background()
	var d []time.Duration
	b.ResetTimer()
	for range max(b.N, 5) {
		start := time.Now()
		s, err := mcpclient.Start(ctx, cfg, mcpclient.Options{Decider: approval.Yolo{}})
		if err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
	b.StopTimer()
	p50, _ := percentiles(d)
	b.ReportMetric(float64(p50.Microseconds())/1e3, "mcp-start-p50-ms")
	b.Logf("MCP stdio server start (process + handshake + tools/list), %d starts: p50 %.1f ms, max %.1f ms",
		len(d), float64(p50.Microseconds())/1e3, float64(slices.Max(d).Microseconds())/1e3)
}
