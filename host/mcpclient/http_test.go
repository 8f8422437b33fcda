package mcpclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/spec"
)

// TestHTTPHeadersAndLostSession: headers (with ${NAME} expanded) go with
// every request, and a call to a server that forgot the session (it
// restarted) runs on a new session.
func TestHTTPHeadersAndLostSession(t *testing.T) {
	newHandler := func() http.Handler {
		s := mcp.NewServer(&mcp.Implementation{Name: "inproc", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	var cur atomic.Value
	cur.Store(newHandler())
	var mu sync.Mutex
	auth := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth[r.Header.Get("Authorization")+"|"+r.Header.Get("X-Plain")]++
		mu.Unlock()
		cur.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the client's Close, which ends the event stream

	cfg := spec.MCPServer{Name: "web", URL: srv.URL + "/mcp?key=secret", Prefix: true,
		Headers: map[string]string{"Authorization": "Bearer ${KOSONG_TEST_TOKEN}", "X-Plain": "p"}}
	ts, l := load(t, options(approval.Yolo{}), cfg)
	if src := l.Servers[0].Source(); src != "mcp server web ("+srv.URL+"/mcp)" {
		t.Fatalf("source %q", src)
	}
	if r := call(context.Background(), ts, "web__echo", `{"text":"one"}`); r.OutputText() != "one" {
		t.Fatalf("first call: %+v", r)
	}
	cur.Store(newHandler()) // the server restarts: its sessions are gone
	if r := call(context.Background(), ts, "web__echo", `{"text":"two"}`); r.IsError() || r.OutputText() != "two" {
		t.Fatalf("after the server restarted: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 1 || auth["Bearer tok-123|p"] == 0 {
		t.Fatalf("headers seen: %v", auth)
	}
}

// TestSSEHeadersAndReconnect: an HTTP+SSE server gets the headers on its
// event stream and on every posted message, and when the stream breaks the
// next call reconnects.
func TestSSEHeadersAndReconnect(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "inproc", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method+" "+r.Header.Get("Authorization")]++
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the client's Close, which ends the event stream

	cfg := spec.MCPServer{Name: "legacy", URL: srv.URL + "/sse", SSE: true, Prefix: true,
		Headers: map[string]string{"Authorization": "Bearer ${KOSONG_TEST_TOKEN}"}}
	ts, _ := load(t, options(approval.Yolo{}), cfg)
	if r := call(context.Background(), ts, "legacy__echo", `{"text":"one"}`); r.OutputText() != "one" {
		t.Fatalf("first call: %+v", r)
	}
	mu.Lock()
	if len(seen) != 2 || seen["GET Bearer tok-123"] != 1 || seen["POST Bearer tok-123"] < 3 { // initialize, initialized, tools/list, call
		t.Fatalf("requests seen: %v", seen)
	}
	mu.Unlock()

	// The event stream breaks. A call that raced the break may fail as a
	// stopped server's call does; the one after it reconnects.
	srv.CloseClientConnections()
	r := call(context.Background(), ts, "legacy__echo", `{"text":"two"}`)
	if r.IsError() {
		if !strings.Contains(r.Message, "MCP server legacy stopped during the call") {
			t.Fatalf("call during the break: %+v", r)
		}
		r = call(context.Background(), ts, "legacy__echo", `{"text":"two"}`)
	}
	if r.IsError() || r.OutputText() != "two" {
		t.Fatalf("after the stream broke: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["GET Bearer tok-123"] != 2 {
		t.Fatalf("requests seen after the reconnect: %v", seen)
	}
}
