package plugin_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/devcerts"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
	"github.com/kosong-host/kosong-host/providers"
)

// remoteTools is a remote tool server's Server for one host connection:
// WorkDir answers the work dir of the host's Environment capability and of
// its session, Block runs until its call is cancelled.
type remoteTools struct {
	blocked chan<- string
	ended   chan<- string
	release <-chan struct{}
	mu      sync.Mutex
	env     pluginrpc.Environment
	session pluginrpc.Session
}

func (s *remoteTools) Describe(context.Context) (pluginrpc.Description, error) {
	return pluginrpc.Description{Tools: []pluginrpc.ToolSpec{
		{Name: "WorkDir", ParametersSchema: json.RawMessage(`{"type":"object"}`), Capabilities: []string{pluginrpc.CapEnvironment}},
		{Name: "Block", ParametersSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "Stuck", ParametersSchema: json.RawMessage(`{"type":"object"}`)},
	}}, nil
}

func (s *remoteTools) Load(ctx context.Context, req pluginrpc.LoadRequest, dial pluginrpc.DialHost) ([]pluginrpc.ToolLoad, error) {
	var env pluginrpc.Environment
	if len(req.Capabilities) > 0 {
		h, err := dial()
		if err != nil {
			return nil, err
		}
		defer h.Close()
		if env, err = h.Environment(ctx); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	s.env, s.session = env, req.Session
	s.mu.Unlock()
	var loads []pluginrpc.ToolLoad
	for _, name := range req.Tools {
		loads = append(loads, pluginrpc.ToolLoad{Name: name, Status: pluginrpc.StatusLoaded})
	}
	return loads, nil
}

func (s *remoteTools) Call(ctx context.Context, req pluginrpc.CallRequest) (pluginrpc.Result, error) {
	if req.ToolName == "Stuck" { // ignores its cancelled call
		s.blocked <- req.ToolCallID
		<-s.release
		return pluginrpc.Result{}, nil
	}
	if req.ToolName == "Block" {
		s.blocked <- req.ToolCallID
		<-ctx.Done()
		s.ended <- req.ToolCallID
		return pluginrpc.Result{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return pluginrpc.Result{Output: []pluginrpc.Part{{Text: s.env.WorkDir + "|" + s.session.WorkDir}}}, nil
}

// remoteServer is a remote tool server listening on addr ("127.0.0.1:0"
// for any port) with the certificates in dir.
type remoteServer struct {
	addr    string
	blocked chan string
	ended   chan string
	release chan struct{}
	conns   atomic.Int32
	stop    func()
}

func serveRemote(t *testing.T, addr, dir string) *remoteServer {
	t.Helper()
	cfg, err := pluginrpc.NetworkTLS(filepath.Join(dir, devcerts.CAFile), filepath.Join(dir, devcerts.ServerFile),
		filepath.Join(dir, devcerts.ServerKeyFile), "")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &remoteServer{addr: ln.Addr().String(), blocked: make(chan string, 10), ended: make(chan string, 10), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- pluginrpc.ServeNetwork(ctx, pluginrpc.NetworkConfig{Listener: ln, TLS: cfg,
			NewServer: func() pluginrpc.Server {
				s.conns.Add(1)
				return &remoteTools{blocked: s.blocked, ended: s.ended, release: s.release}
			}})
	}()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			close(s.release)
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(bound):
				t.Error("the server did not stop")
			}
		})
	}
	t.Cleanup(s.stop)
	return s
}

func mintCerts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := devcerts.Mint(dir, devcerts.Options{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// remoteSpec reaches the server at addr with the CA of caDir and the client
// certificate of clientDir.
func remoteSpec(t *testing.T, addr, caDir, clientDir string, tools ...string) plugin.Spec {
	t.Helper()
	cfg, err := pluginrpc.NetworkTLS(filepath.Join(caDir, devcerts.CAFile), filepath.Join(clientDir, devcerts.ClientFile),
		filepath.Join(clientDir, devcerts.ClientKeyFile), "")
	if err != nil {
		t.Fatal(err)
	}
	return plugin.Spec{Config: plugin.Config{Name: "rt", Remote: &plugin.Remote{Addr: addr, TLS: cfg}, StartTimeout: bound},
		Tools: tools}
}

func remoteOptions(ts *toolset.Toolset, workDir string) plugin.Options {
	return plugin.Options{SessionID: "s-" + filepath.Base(workDir), WorkDir: workDir, Decider: approval.Yolo{},
		Env: plugin.Environment(workDir, testEnv), RestartBackoff: 10 * time.Millisecond}
}

func loadRemote(t *testing.T, sp plugin.Spec, workDir string) (*toolset.Toolset, *plugin.Loaded) {
	t.Helper()
	ts := toolset.New(nil)
	l := plugin.Load(context.Background(), []plugin.Spec{sp}, remoteOptions(ts, workDir))
	t.Cleanup(l.Close)
	if len(l.Failures) > 0 {
		t.Fatalf("load: %v", l.Failures)
	}
	for _, st := range l.Status {
		if err := ts.Add(st.Tool); err != nil {
			t.Fatal(err)
		}
	}
	return ts, l
}

func TestRemoteHostsEachLoadTheirOwn(t *testing.T) {
	certs := mintCerts(t)
	srv := serveRemote(t, "127.0.0.1:0", certs)
	dirs := []string{t.TempDir(), t.TempDir()}
	sets := make([]*toolset.Toolset, len(dirs))
	for i, d := range dirs {
		sets[i], _ = loadRemote(t, remoteSpec(t, srv.addr, certs, certs, "WorkDir"), d)
	}
	var wg sync.WaitGroup
	for i, ts := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				r := call(t, ts, "WorkDir", "{}")
				if want := dirs[i] + "|" + dirs[i]; r.OutputText() != want {
					t.Errorf("host %d: %q (%s), want %q", i, r.OutputText(), r.Message, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestRemoteTLSRefused(t *testing.T) {
	team, other := mintCerts(t), mintCerts(t)
	tests := []struct {
		name      string
		serverDir string // the server's CA and certificate
		caDir     string // the CA the host trusts
		clientDir string // the host's certificate
		want      string
	}{
		{"a server certificate from another CA", other, team, team, "the server's certificate is not signed by the CA in tls.ca"},
		{"a client certificate the server does not trust", team, team, other, "the server refused this host's certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveRemote(t, "127.0.0.1:0", tt.serverDir)
			ts := toolset.New(nil)
			l := plugin.Load(context.Background(), []plugin.Spec{remoteSpec(t, srv.addr, tt.caDir, tt.clientDir)}, remoteOptions(ts, t.TempDir()))
			defer l.Close()
			if len(l.Failures) != 1 || !strings.Contains(l.Failures[0], tt.want) || !strings.Contains(l.Failures[0], srv.addr) {
				t.Fatalf("failures %q, want one naming %s with %q", l.Failures, srv.addr, tt.want)
			}
			t.Log(l.Failures[0])
			if strings.Contains(l.Failures[0], "\n") {
				t.Errorf("not one line: %q", l.Failures[0])
			}
		})
	}
}

func TestRemoteServerGoesAwayMidCallAndComesBack(t *testing.T) {
	certs := mintCerts(t)
	srv := serveRemote(t, "127.0.0.1:0", certs)
	work := t.TempDir()
	ts, _ := loadRemote(t, remoteSpec(t, srv.addr, certs, certs), work)

	pending := ts.Handle(context.Background(), providers.ToolCall{ID: "call_block", Name: "Block", Arguments: "{}"})
	select {
	case <-srv.blocked:
	case <-time.After(bound):
		t.Fatal("the call did not reach the server")
	}
	srv.stop()
	r := result(t, pending, "the call on a lost connection")
	want := fmt.Sprintf("remote plugin rt: the connection to %s was lost during the call; the next call reconnects", srv.addr)
	if !r.IsError() || !strings.Contains(r.Message, want) {
		t.Fatalf("result %v %q, want an error with %q", r.Kind, r.Message, want)
	}

	// While the server is away, a call says so; it does not hang.
	away := call(t, ts, "WorkDir", "{}")
	if !away.IsError() || !strings.Contains(away.Message, srv.addr) {
		t.Fatalf("call while the server is away: %v %q", away.Kind, away.Message)
	}

	t.Log(r.Message)
	t.Log(away.Message)
	// Back on the same address: the next call reconnects and loads again.
	serveRemote(t, srv.addr, certs)
	back := call(t, ts, "WorkDir", "{}")
	if back.IsError() || back.OutputText() != work+"|"+work {
		t.Fatalf("after the server came back: %v %q %q", back.Kind, back.OutputText(), back.Message)
	}
}

func TestRemoteCallTimeoutAndCancel(t *testing.T) {
	certs := mintCerts(t)
	srv := serveRemote(t, "127.0.0.1:0", certs)
	sp := remoteSpec(t, srv.addr, certs, certs)
	sp.Timeout = 300 * time.Millisecond
	ts, l := loadRemote(t, sp, t.TempDir())
	first := l.Plugins[0].Current()
	wait := func(ch chan string, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(bound):
			t.Fatalf("%s: not seen by the server", what)
		}
	}

	if r := call(t, ts, "Block", "{}"); r.Message != "Tool Block timed out after 300ms" {
		t.Fatalf("timed-out call: %v %q", r.Kind, r.Message)
	}
	wait(srv.blocked, "the timed-out call")
	wait(srv.ended, "the timeout")

	ctx, cancel := context.WithCancel(context.Background())
	pending := ts.Handle(ctx, providers.ToolCall{ID: "call_cancel", Name: "Block", Arguments: "{}"})
	wait(srv.blocked, "the call to cancel")
	cancel()
	wait(srv.ended, "the cancel")
	if r := result(t, pending, "the cancelled call"); !r.IsError() {
		t.Fatalf("cancelled call: %+v", r)
	}
	// The server answered the liveness checks: the connection is kept.
	if r := call(t, ts, "WorkDir", "{}"); r.IsError() {
		t.Fatalf("after the cancel: %q", r.Message)
	}
	if cur := l.Plugins[0].Current(); cur != first || srv.conns.Load() != 1 {
		t.Fatalf("reconnected after a cancel (%d connections)", srv.conns.Load())
	}
}

// A tool still running past the grace period after its call ended takes
// down its host's connection, not the server: the host reconnects.
func TestRemoteOverrunClosesTheConnection(t *testing.T) {
	t.Setenv(pluginrpc.CancelGraceEnv, "100ms")
	certs := mintCerts(t)
	srv := serveRemote(t, "127.0.0.1:0", certs)
	sp := remoteSpec(t, srv.addr, certs, certs)
	sp.Timeout = 200 * time.Millisecond
	work := t.TempDir()
	ts, l := loadRemote(t, sp, work)
	first := l.Plugins[0].Current()
	if r := call(t, ts, "Stuck", "{}"); r.Message != "Tool Stuck timed out after 200ms" {
		t.Fatalf("stuck call: %v %q", r.Kind, r.Message)
	}
	<-srv.blocked
	select {
	case <-first.Done():
	case <-time.After(bound):
		t.Fatal("the server kept the connection of a tool that overran its grace period")
	}
	if r := call(t, ts, "WorkDir", "{}"); r.IsError() || r.OutputText() != work+"|"+work {
		t.Fatalf("after the overrun: %v %q %q", r.Kind, r.OutputText(), r.Message)
	}
	if n := srv.conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (the host reconnected once)", n)
	}
}

// TestRemoteNotAToolServer: what answers at a remote address is not a
// kosong tool server speaking mutual TLS.
func TestRemoteNotAToolServer(t *testing.T) {
	certs := mintCerts(t)
	serverTLS, err := pluginrpc.NetworkTLS(filepath.Join(certs, devcerts.CAFile), filepath.Join(certs, devcerts.ServerFile),
		filepath.Join(certs, devcerts.ServerKeyFile), "")
	if err != nil {
		t.Fatal(err)
	}
	h2TLS := serverTLS.Clone()
	h2TLS.NextProtos = []string{"h2"}
	noALPN := serverTLS.Clone()
	noALPN.NextProtos = nil
	tlsServer := func(cfg *tls.Config) func(net.Conn) {
		return func(c net.Conn) {
			tc := tls.Server(c, cfg)
			_ = tc.Handshake()
			_, _ = tc.Read(make([]byte, 1))
		}
	}
	tests := []struct {
		name  string
		serve func(net.Conn) // nil: nothing listens
		want  string
	}{
		{"a TLS server of another protocol", tlsServer(h2TLS), "is not a kosong tool server (it does not speak kosong-plugin-v1)"},
		{"a TLS server without ALPN", tlsServer(noALPN), "is not a kosong tool server (it does not speak kosong-plugin-v1)"},
		{"a plaintext server", func(c net.Conn) {
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
		}, "TLS handshake: tls: first record does not look like a TLS handshake"},
		{"nothing listening", nil, "connect: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			if tt.serve == nil {
				ln.Close()
			} else {
				defer ln.Close()
				go func() {
					for {
						c, err := ln.Accept()
						if err != nil {
							return
						}
						go func() { defer c.Close(); tt.serve(c) }()
					}
				}()
			}
			ts := toolset.New(nil)
			l := plugin.Load(context.Background(), []plugin.Spec{remoteSpec(t, addr, certs, certs)}, remoteOptions(ts, t.TempDir()))
			defer l.Close()
			if len(l.Failures) != 1 || !strings.Contains(l.Failures[0], "remote tool server "+addr+": ") ||
				!strings.Contains(l.Failures[0], tt.want) {
				t.Fatalf("failures %q, want one with %q", l.Failures, tt.want)
			}
		})
	}
}

// TestRemoteServerRefusesClientsWithoutTheTeamCA: a plaintext client and a
// TLS client without a certificate are refused; the server goes on serving.
func TestRemoteServerRefusesClientsWithoutTheTeamCA(t *testing.T) {
	certs := mintCerts(t)
	srv := serveRemote(t, "127.0.0.1:0", certs)
	plain, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	// The server answers plaintext with a TLS alert record (type 21) at most.
	if b := make([]byte, 64); func() bool { n, _ := plain.Read(b); return n > 0 && b[0] != 21 }() {
		t.Fatalf("a plaintext client got data: %q", b)
	}
	cfg, err := pluginrpc.NetworkTLS(filepath.Join(certs, devcerts.CAFile), filepath.Join(certs, devcerts.ClientFile),
		filepath.Join(certs, devcerts.ClientKeyFile), "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Certificates = nil
	anon, err := tls.Dial("tcp", srv.addr, cfg)
	if err == nil {
		_, err = anon.Read(make([]byte, 1))
		anon.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Fatalf("a client without a certificate: %v", err)
	}
	work := t.TempDir()
	ts, _ := loadRemote(t, remoteSpec(t, srv.addr, certs, certs, "WorkDir"), work)
	if r := call(t, ts, "WorkDir", "{}"); r.IsError() || r.OutputText() != work+"|"+work {
		t.Fatalf("a host with the team's certificate: %v %q", r.Kind, r.Message)
	}
	if n := srv.conns.Load(); n != 1 {
		t.Fatalf("%d connections served, want only the good host's", n)
	}
}
