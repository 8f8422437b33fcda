package main_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/host/testbin"
)

// testServer is `kosong-host serve` running for a test, with the
// scripted provider.
type testServer struct {
	URL    string
	Token  string
	State  string // its XDG_STATE_HOME (the token file, the sessions)
	Client *serverclient.Client

	mu  sync.Mutex
	log bytes.Buffer
}

// Log is what the server wrote so far.
func (s *testServer) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

func (s *testServer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Write(p)
}

// freeAddr is a free loopback address.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startScriptedServer runs kosong-host serve on a free loopback port
// with the test agent and the scripted provider playing script (each
// session from its first turn); it is stopped in t.Cleanup.
func startScriptedServer(t *testing.T, script string) *testServer {
	t.Helper()
	dir := writeFiles(t, map[string]string{"script.yaml": script})
	addr := freeAddr(t)
	s := &testServer{URL: "http://" + addr, State: t.TempDir()}
	cmd := exec.Command(kosongHost(t), "--agent", filepath.Join(testbin.Root(), "agent.yaml"), "serve", "--listen", addr,
		"--provider", "scripted", "--script", filepath.Join(dir, "script.yaml"))
	cmd.Dir = dir
	cmd.Env = hostEnv("XDG_STATE_HOME="+s.State, "XDG_CONFIG_HOME="+t.TempDir(), "HOME="+t.TempDir())
	cmd.Stdout, cmd.Stderr = s, s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(expectWithin):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(expectWithin)
	for {
		token, err := serverclient.ReadToken("", func(k string) string {
			if k == "XDG_STATE_HOME" {
				return s.State
			}
			return ""
		})
		if err == nil && token != "" {
			if c, err := serverclient.New(s.URL, token, nil); err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err = c.Sessions(ctx)
				cancel()
				if err == nil {
					s.Token, s.Client = token, c
					return s
				}
			}
		}
		select {
		case <-exited:
			t.Fatalf("kosong-host serve exited:\n%s", s.Log())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("kosong-host serve did not answer on %s:\n%s", addr, s.Log())
		}
	}
}

// newSession creates a session of a new work dir.
func (s *testServer) newSession(t *testing.T) (id, work string) {
	t.Helper()
	work = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), expectWithin)
	defer cancel()
	info, err := s.Client.CreateSession(ctx, serverclient.CreateSession{Cwd: work})
	if err != nil {
		t.Fatalf("creating a session: %v\n%s", err, s.Log())
	}
	return info.ID, work
}

// waitEvent reads session id's events from the first until one of type
// typ for which match (nil: any) is true, and returns it.
func (s *testServer) waitEvent(t *testing.T, id, typ string, match func(serverclient.Event) bool) serverclient.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), expectWithin)
	defer cancel()
	st, err := s.Client.Events(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var seen []string
	for {
		ev, err := st.Next()
		if err != nil {
			t.Fatalf("no %s event (%v); saw %s", typ, err, strings.Join(seen, " "))
		}
		seen = append(seen, ev.Type+"#"+strconv.FormatInt(ev.Seq, 10))
		if ev.Type == typ && (match == nil || match(ev)) {
			return ev
		}
	}
}
