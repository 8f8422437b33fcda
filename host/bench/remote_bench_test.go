//go:build unix

package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/devcerts"
	"github.com/kosong-host/kosong-host/providers"
)

// serveEcho runs the standalone echo plugin as a remote tool server on a
// free loopback port with the certificates in dir and returns its address.
func serveEcho(b *testing.B, bin, dir string) string {
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--ca", filepath.Join(dir, devcerts.CAFile),
		"--cert", filepath.Join(dir, devcerts.ServerFile), "--key", filepath.Join(dir, devcerts.ServerKeyFile))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var line struct {
			Message string `json:"@message"`
			Addr    string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "serving tools" {
			go func() {
				for sc.Scan() {
				}
			}()
			return line.Addr
		}
	}
	b.Fatalf("the echo plugin did not start serving: %v", sc.Err())
	return ""
}

// BenchmarkRemoteRoundTrip: Handle -> Echo -> result through a remote tool
// server over loopback TCP with mutual TLS (one connection, yamux, gRPC),
// beside the same Echo launched as a local plugin, in turns of 100 calls.
func BenchmarkRemoteRoundTrip(b *testing.B) {
	localPath, echo := echoAgent(b)
	certs := b.TempDir()
	if _, err := devcerts.Mint(certs, devcerts.Options{}); err != nil {
		b.Fatal(err)
	}
	addr := serveEcho(b, echo, certs)
	dir := b.TempDir()
	remotePath := filepath.Join(dir, "agent.yaml")
	os.WriteFile(filepath.Join(dir, "s.md"), []byte("x"), 0o644)
	os.WriteFile(remotePath, []byte(fmt.Sprintf("version: 1\nagent:\n  name: r\n  system_prompt_path: ./s.md\n  tools:\n"+
		"    - remote: %s\n      tls: {ca: %s, cert: %s, key: %s}\n", addr, filepath.Join(certs, devcerts.CAFile),
		filepath.Join(certs, devcerts.ClientFile), filepath.Join(certs, devcerts.ClientKeyFile))), 0o644)

	ctx := context.Background()
	handle := func(path string) func() {
		a, err := agent.Load(ctx, path, agent.Options{WorkDir: b.TempDir(), StateDir: b.TempDir(), Decider: approval.Yolo{}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(a.Close)
		return func() {
			r := a.Toolset.Handle(ctx, providers.ToolCall{ID: "c", Name: "Echo", Arguments: `{"text":"hello"}`}).Result()
			if r.IsError() {
				b.Fatal(r.Message)
			}
		}
	}
	local, remote := handle(localPath), handle(remotePath)
	b.ResetTimer()
	d := measureInterleaved(local, remote)
	b.StopTimer()
	b.ReportMetric(us(d[0][0]), "local-p50-us")
	b.ReportMetric(us(d[1][0]), "remote-p50-us")
	b.ReportMetric(float64(d[1][0])/float64(d[0][0]), "remote/local")
	b.Logf("echo round trip, Handle -> plugin -> result, %d calls each in turns of 100 (p50 / p99):", calls)
	b.Logf("  local plugin (go-plugin, unix socket, mTLS)    : %8.1f / %8.1f us", us(d[0][0]), us(d[0][1]))
	b.Logf("  remote tool server (loopback TCP, mTLS, yamux) : %8.1f / %8.1f us", us(d[1][0]), us(d[1][1]))
	b.Logf("  remote / local: %.2f (p50), %.2f (p99)", float64(d[1][0])/float64(d[0][0]), float64(d[1][1])/float64(d[0][1]))
}
