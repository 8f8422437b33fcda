// Package temporaltest starts a real Temporal server for tests: the
// Temporal CLI's development server (`temporal server start-dev`), built
// from the Go module proxy once per machine by host/testcomponent, on
// 127.0.0.1 with free ports and its database in a temporary folder.
package temporaltest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/kosong-host/kosong-host/host/testcomponent"
)

// Module, Version and Package are the Temporal CLI built for the tests.
const (
	Module  = "github.com/temporalio/cli"
	Version = "v1.5.1"
	Package = "./cmd/temporal"
)

// Namespace is the namespace the development server makes.
const Namespace = "default"

// Server is a running development server.
type Server struct {
	// HostPort is 127.0.0.1:PORT, the frontend's gRPC address.
	HostPort string
	cmd      *exec.Cmd
	done     chan struct{}
	log      string
}

// Binary builds (once per machine) the Temporal CLI and returns its path;
// under CI a missing build fails the test, elsewhere it skips it.
func Binary(t testing.TB) string {
	t.Helper()
	return testcomponent.Need(t, Module, Version, Package, "temporal")
}

// Start builds (once per machine) and starts a development server;
// t.Cleanup stops it.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	ports := freePorts(t, 3)
	logPath := filepath.Join(dir, "temporal.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", strconv.Itoa(ports[0]), "--http-port", strconv.Itoa(ports[1]), "--metrics-port", strconv.Itoa(ports[2]),
		"--db-filename", filepath.Join(dir, "temporal.db"), "--log-level", "error")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	s := &Server{HostPort: fmt.Sprintf("127.0.0.1:%d", ports[0]), cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() { _ = cmd.Wait(); logf.Close(); close(s.done) }()
	t.Cleanup(s.Stop)
	if err := s.wait(2 * time.Minute); err != nil {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("%v; its log: %s", err, b)
	}
	return s
}

// wait returns once the server answers a client of the default namespace.
func (s *Server) wait(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := client.DialContext(ctx, client.Options{HostPort: s.HostPort, Namespace: Namespace, Logger: quiet{}})
		if err == nil {
			_, err = c.WorkflowService().DescribeNamespace(ctx, describe(Namespace))
			c.Close()
		}
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("temporal server start-dev exited: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("temporal dev server on %s not ready after %s: %v", s.HostPort, limit, err)
		}
	}
}

// Stop stops the server and waits for it to exit.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Dial is a client of the server's default namespace, closed by t.Cleanup.
func (s *Server) Dial(t testing.TB) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: s.HostPort, Namespace: Namespace, Logger: quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// freePorts returns n distinct free TCP ports of 127.0.0.1.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}
