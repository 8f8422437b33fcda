//go:build unix

package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/testcomponent"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// referenceMCPServer is the reference MCP server from npm (the
// TypeScript SDK's server-everything) and its version.
const (
	referenceMCPServer  = "@modelcontextprotocol/server-everything"
	referenceMCPVersion = "2026.8.31"
)

// BenchmarkMCPServeVsReference: an echo call over stdio through
// `kosong-host mcp serve` (MCP -> the agent's toolset -> the Echo plugin
// -> back) beside the echo tool of the reference server, both called by
// the host's MCP client, in turns of 100 calls. Target: mcp serve / the
// reference at most 1.0 at p50.
func BenchmarkMCPServeVsReference(b *testing.B) {
	dir, err := testcomponent.NpmPackage(referenceMCPServer, referenceMCPVersion)
	if err != nil {
		testcomponent.Missing(b, err)
	}
	agentPath, _ := echoAgent(b)
	home := b.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_STATE_HOME": filepath.Join(home, "state")}
	ctx := context.Background()
	l := mcpclient.LoadAll(ctx, []spec.MCPServer{
		{Name: "ours", Command: hostBinary(b), Args: []string{"--agent", agentPath, "mcp", "serve", "--yolo"}, Env: env, Prefix: true, EnabledTools: []string{"Echo"}},
		{Name: "ref", Command: "node", Args: []string{filepath.Join(dir, "node_modules", referenceMCPServer, "dist", "index.js"), "stdio"}, Env: env, Prefix: true, EnabledTools: []string{"echo"}},
	}, mcpclient.Options{Decider: approval.Yolo{}})
	defer l.Close()
	for _, st := range l.Status {
		if st.Err != nil {
			b.Fatalf("MCP server %s: %v", st.Name, st.Err)
		}
	}
	ts := toolset.New(nil)
	for _, s := range l.Servers {
		for _, t := range s.Tools() {
			if err := ts.Add(t); err != nil {
				b.Fatal(err)
			}
		}
	}
	call := func(name, args, want string) func() {
		return func() {
			r := ts.Handle(ctx, providers.ToolCall{ID: "c", Name: name, Arguments: args}).Result()
			if r.IsError() || r.OutputText() != want {
				b.Fatalf("%s: %+v", name, r)
			}
		}
	}
	b.ResetTimer()
	got := measureInterleaved(call("ours__Echo", `{"text":"hello"}`, "hello"), call("ref__echo", `{"message":"hello"}`, "Echo: hello"))
	b.StopTimer()
	ours, ref := got[0], got[1]
	p50, p99 := float64(ours[0])/float64(ref[0]), float64(ours[1])/float64(ref[1])
	b.ReportMetric(us(ours[0]), "serve-p50-us")
	b.ReportMetric(us(ref[0]), "ref-p50-us")
	b.ReportMetric(p50, "serve/ref-p50")
	b.ReportMetric(p99, "serve/ref-p99")
	b.Logf("MCP stdio echo, the host's MCP client -> server -> result, %d calls each in turns of 100 (p50 / p99):", calls)
	b.Logf("  kosong-host mcp serve (Echo plugin)  : %8.1f / %8.1f us", us(ours[0]), us(ours[1]))
	b.Logf("  %s %s : %8.1f / %8.1f us", referenceMCPServer, referenceMCPVersion, us(ref[0]), us(ref[1]))
	b.Logf("  mcp serve / reference: p50 %.2f (target <= 1.0), p99 %.2f", p50, p99)
}
