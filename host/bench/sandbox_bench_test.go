//go:build linux

package bench

import (
	"context"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/testbin"
)

// BenchmarkSandboxStart: one plugin's start (launch, mutual TLS handshake,
// Describe) confined by Landlock through `kosong-host sandbox-exec` beside
// the same plugin unconfined, alternating after a warm-up.
func BenchmarkSandboxStart(b *testing.B) {
	if sandbox.ABI() == 0 {
		b.Skip("this kernel has no Landlock")
	}
	_, echo := echoAgent(b)
	host, err := testbin.Build("cmd/kosong-host", "kosong-host")
	if err != nil {
		b.Fatal(err)
	}
	work, tmp := b.TempDir(), b.TempDir()
	policy := &sandbox.Policy{Plugin: "echo", Read: []string{"/"}, Write: []string{work, tmp}}
	getenv := func(k string) string {
		if k == "TMPDIR" {
			return tmp
		}
		return ""
	}
	const rounds = 20
	var walls [2][]time.Duration
	var cpus [2]time.Duration
	for i := range 2*rounds + 4 {
		confined := i%2 == 1
		cfg := plugin.Config{Name: "echo", Path: echo, Getenv: getenv}
		if confined {
			cfg.Sandbox, cfg.SandboxExec = policy, host
		}
		c0, t0 := cpuTime(), time.Now()
		p, err := plugin.Launch(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		wall := time.Since(t0)
		p.Kill()
		if i < 4 {
			continue
		}
		walls[i%2] = append(walls[i%2], wall)
		cpus[i%2] += cpuTime() - c0
	}
	plain, _ := percentiles(walls[0])
	boxed, _ := percentiles(walls[1])
	b.ReportMetric(ms(plain), "start-unconfined-ms")
	b.ReportMetric(ms(boxed), "start-sandboxed-ms")
	b.ReportMetric(float64(boxed)/float64(plain), "sandboxed/unconfined")
	b.Logf("plugin start, Landlock ABI %d (p50 of %d, wall / CPU of host+plugin):", sandbox.ABI(), rounds)
	b.Logf("  unconfined                       : %6.1f ms / %6.1f ms CPU", ms(plain), ms(cpus[0]/rounds))
	b.Logf("  sandboxed (through sandbox-exec) : %6.1f ms / %6.1f ms CPU", ms(boxed), ms(cpus[1]/rounds))
	b.Logf("  sandboxed / unconfined: %.2fx", float64(boxed)/float64(plain))
}
