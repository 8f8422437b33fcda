package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/mcpserver"
	"github.com/kosong-host/kosong-host/host/toolset"
)

const sessionToken = "0123456789abcdef-token"

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// post sends an MCP message to h, in session (none: a new session), and
// returns the status, the session id of the answer and its body.
func post(t *testing.T, h http.Handler, session, body string) (int, string, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+sessionToken)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header().Get("Mcp-Session-Id"), rec.Body.String()
}

func initialize(t *testing.T, h http.Handler) string {
	t.Helper()
	code, id, body := post(t, h, "", initializeBody)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: status %d, session %q: %s", code, id, body)
	}
	return id
}

func ping(t *testing.T, h http.Handler, session string) int {
	t.Helper()
	code, _, _ := post(t, h, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	return code
}

func liveSessions(srv *mcpserver.Server) int {
	n := 0
	for range srv.MCP().Sessions() {
		n++
	}
	return n
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHTTPSessionsBounded: 8,000 initializes that never end their session
// leave at most the default 100 sessions open and the heap where it was;
// the least recently used session is the one closed (its next request gets
// 404), and a session in use stays.
func TestHTTPSessionsBounded(t *testing.T) {
	srv := mcpserver.New(tools(t, nil), nil, mcpserver.Options{})
	h := srv.Handler(sessionToken)
	first := initialize(t, h)
	kept := initialize(t, h)
	var before uint64
	for i := range 8_000 {
		initialize(t, h)
		if i%50 == 0 && ping(t, h, kept) != http.StatusOK {
			t.Fatalf("the session in use was closed after %d initializes", i)
		}
		if i == 1_000 {
			before = heapInUse()
		}
	}
	if n := liveSessions(srv); n != mcpserver.DefaultMaxSessions {
		t.Errorf("%d sessions open, want %d", n, mcpserver.DefaultMaxSessions)
	}
	after := heapInUse()
	t.Logf("heap after 1,000 initializes %d KB, after 8,000 %d KB", before>>10, after>>10)
	if after > before+8<<20 {
		t.Errorf("the heap grew from %d KB to %d KB over 7,000 abandoned sessions", before>>10, after>>10)
	}
	if code := ping(t, h, first); code != http.StatusNotFound {
		t.Errorf("the least recently used session answered %d, want 404 (closed)", code)
	}
	if code := ping(t, h, kept); code != http.StatusOK {
		t.Errorf("the session in use answered %d, want 200", code)
	}
}

// TestHTTPSessionsAllBusy: at the limit, with a request in flight in every
// session, a new session is refused with 503 and a message naming the
// limit; once a session is idle again, a new one replaces it.
func TestHTTPSessionsAllBusy(t *testing.T) {
	ts := toolset.New(nil)
	entered, release := make(chan struct{}, 2), make(chan struct{})
	if err := ts.Add(fakeTool{spec: toolset.Spec{Name: "Block", Description: "Blocks.", Parameters: json.RawMessage(`{"type":"object"}`)},
		call: func(context.Context, string, json.RawMessage) toolset.Result {
			entered <- struct{}{}
			<-release
			return toolset.Result{}
		}}); err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(ts, nil, mcpserver.Options{MaxSessions: 2})
	h := srv.Handler(sessionToken)
	var wg sync.WaitGroup
	for range 2 {
		id := initialize(t, h)
		post(t, h, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		wg.Add(1)
		go func() {
			defer wg.Done()
			post(t, h, id, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Block","arguments":{}}}`)
		}()
	}
	for range 2 {
		select {
		case <-entered:
		case <-time.After(30 * time.Second):
			t.Fatal("the blocking calls did not start")
		}
	}
	code, _, body := post(t, h, "", initializeBody)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "too many MCP sessions: all 2 are in use (--max-sessions)") {
		t.Errorf("initialize with every session busy: status %d: %s", code, body)
	}
	close(release)
	wg.Wait()
	initialize(t, h)
	if n := liveSessions(srv); n != 2 {
		t.Errorf("%d sessions open, want 2", n)
	}
}

// TestHTTPSessionsIdleTimeout: a session with no request for the session
// timeout is closed; its next request gets 404.
func TestHTTPSessionsIdleTimeout(t *testing.T) {
	srv := mcpserver.New(tools(t, nil), nil, mcpserver.Options{SessionTimeout: 100 * time.Millisecond})
	h := srv.Handler(sessionToken)
	id := initialize(t, h)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(30 * time.Second); liveSessions(srv) > 0; <-tick.C {
		if time.Now().After(deadline) {
			t.Fatal("the idle session was not closed within 30s")
		}
	}
	// The session is closed; the HTTP handler forgets it right after (its
	// close callback), so a request may still find it for a moment. A
	// closed session cannot be revived by a request.
	for deadline := time.Now().Add(30 * time.Second); ; <-tick.C {
		code := ping(t, h, id)
		if code == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed session still answers %d after 30s, want 404", code)
		}
	}
}
