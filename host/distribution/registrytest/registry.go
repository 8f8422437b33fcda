// Package registrytest starts a real OCI registry (the CNCF distribution
// registry, built from the Go module proxy by host/testcomponent) for
// tests, on 127.0.0.1 with a free port and a temporary storage folder.
package registrytest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/testcomponent"
)

// Module and Version are the registry built for the tests.
const (
	Module  = "github.com/distribution/distribution/v3"
	Version = "v3.1.2"
)

// Registry is a running registry.
type Registry struct {
	// Host is 127.0.0.1:PORT.
	Host string
	cmd  *exec.Cmd
	done chan struct{}
}

// Start builds (once per machine) and starts a registry; t.Cleanup stops it.
func Start(t testing.TB) *Registry {
	t.Helper()
	bin := testcomponent.Need(t, Module, Version, "cmd/registry", "registry")
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	cfg := fmt.Sprintf("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n",
		filepath.Join(dir, "data"), host)
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfgPath)
	logf, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &Registry{Host: host, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); logf.Close(); close(r.done) }()
	t.Cleanup(r.Stop)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return r
			}
		}
		select {
		case <-r.done:
			b, _ := os.ReadFile(filepath.Join(dir, "registry.log"))
			t.Fatalf("registry exited: %s", b)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry on %s not ready after 60s", host)
		}
	}
}

// Stop stops the registry and waits for it to exit.
func (r *Registry) Stop() {
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Kill()
	<-r.done
}
