package mcpclient_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// syncBuffer is a log the client writes from its goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logged is options whose log (Info and up) is the returned buffer.
func logged(opts mcpclient.Options) (mcpclient.Options, *syncBuffer) {
	buf := &syncBuffer{}
	opts.Logger = hclog.New(&hclog.LoggerOptions{Output: buf, Level: hclog.Info})
	return opts, buf
}

// changes counts the list_changed events written on a standalone event
// stream (see stormHandler).
type changes struct {
	n  atomic.Int64
	ch chan struct{}
}

func newChanges() *changes { return &changes{ch: make(chan struct{}, 1)} }

func (c *changes) written() {
	c.n.Add(1)
	select {
	case c.ch <- struct{}{}:
	default:
	}
}

// after waits until a list_changed was written after the count was n.
func (c *changes) after(n int64) error {
	deadline := time.After(30 * time.Second) // a guard against a hang
	for c.n.Load() <= n {
		select {
		case <-c.ch:
		case <-deadline:
			return fmt.Errorf("list_changed did not go out")
		}
	}
	return nil
}

// inprocServer is a go-sdk server with the tool echo, and grow, which adds
// a tool and answers once its list_changed went out on the standalone
// event stream (counted by seen; the go-sdk sends one for the changes of
// 10 ms).
func inprocServer(seen *changes) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "inproc", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "grow"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Name string `json:"name"`
	}) (*mcp.CallToolResult, any, error) {
		before := seen.n.Load()
		addNamedTool(s, in.Name)
		if err := seen.after(before); err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grown"}}}, nil, nil
	})
	return s
}

func addNamedTool(s *mcp.Server, name string) {
	mcp.AddTool(s, &mcp.Tool{Name: name}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "I am " + name}}}, nil, nil
	})
}

// serveHTTP serves h on 127.0.0.1 and returns its MCP URL. Call it before
// load: the server closes after the client, whose Close ends the event
// stream the server would otherwise wait for.
func serveHTTP(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// stormHandler wraps the standalone event stream (GET) of h: an event
// holding list_changed is written times times, then counted.
func stormHandler(h http.Handler, times int, seen *changes) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w = &stormWriter{ResponseWriter: w, times: times, seen: seen}
		}
		h.ServeHTTP(w, r)
	})
}

type stormWriter struct {
	http.ResponseWriter
	times int
	seen  *changes
}

func (w *stormWriter) Write(p []byte) (int, error) {
	changed := bytes.Contains(p, []byte(`"notifications/tools/list_changed"`))
	n := 1
	if changed {
		n = w.times
	}
	for range n {
		if _, err := w.ResponseWriter.Write(p); err != nil {
			return 0, err
		}
	}
	if changed {
		w.Flush()
		w.seen.written()
	}
	return len(p), nil
}

func (w *stormWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestHTTPEventStream: over streamable HTTP the standalone event stream is
// open, so a tool the server adds outside any call joins, and a server
// request outside a call is answered at once (served, or refused when the
// host does not serve it), not after the server's timeout.
func TestHTTPEventStream(t *testing.T) {
	server := inprocServer(newChanges())
	url := serveHTTP(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	_, l := load(t, options(approval.Yolo{}), spec.MCPServer{Name: "web", URL: url, Prefix: true})
	srv := l.Servers[0]

	addNamedTool(server, "later")
	waitFor(t, "the tool web__later", func() bool {
		for _, tl := range srv.Tools() {
			if tl.Spec().Name == "web__later" {
				return true
			}
		}
		return false
	})

	var ss *mcp.ServerSession
	for s := range server.Sessions() {
		ss = s
	}
	if ss == nil {
		t.Fatal("no server session")
	}
	tests := []struct {
		name    string
		request func(context.Context) error
		refused string
	}{
		{"sampling", func(ctx context.Context) error {
			_, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			return err
		}, "CreateMessage"},
		{"elicitation", func(ctx context.Context) error {
			_, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}})
			return err
		}, "elicitation"},
		{"roots", func(ctx context.Context) error {
			_, err := ss.ListRoots(ctx, nil)
			return err
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The bound is the server's wait for an answer that never comes.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			start := time.Now()
			err := tt.request(ctx)
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("answered after %s", d)
			}
			switch {
			case tt.refused == "" && err != nil:
				t.Fatalf("not served: %v", err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused) || ctx.Err() != nil):
				t.Fatalf("want a refusal naming %s, got %v", tt.refused, err)
			}
		})
	}
}

// TestHTTPWithoutEventStream: a server that does not offer the standalone
// stream (405), or whose stream never answers, works for calls; the
// latter is logged and costs at most the start timeout.
func TestHTTPWithoutEventStream(t *testing.T) {
	tests := []struct {
		name string
		get  func(w http.ResponseWriter, r *http.Request)
		log  string
	}{
		{"405", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) }, ""},
		{"no answer", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			"MCP server did not open its event stream in time; going on without it: server=web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := inprocServer(newChanges())
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
			url := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					tt.get(w, r)
					return
				}
				h.ServeHTTP(w, r)
			}))
			opts, logs := logged(options(approval.Yolo{}))
			opts.StartTimeout = 3 * time.Second
			start := time.Now()
			ts, l := load(t, opts, spec.MCPServer{Name: "web", URL: url, Prefix: true})
			if d := time.Since(start); d > 15*time.Second {
				t.Fatalf("loading took %s", d)
			}
			if len(l.Servers) != 1 {
				t.Fatalf("status %+v", l.Status)
			}
			if r := call(context.Background(), ts, "web__echo", `{"text":"ok"}`); r.OutputText() != "ok" {
				t.Fatalf("call: %+v", r)
			}
			if !strings.Contains(logs.String(), tt.log) {
				t.Fatalf("log %q lacks %q", logs, tt.log)
			}
		})
	}
}

// TestProgressBeforeResult: every progress notification a server sends
// before its result is delivered before the call returns (3 of 3, each
// time), on every transport.
func TestProgressBeforeResult(t *testing.T) {
	for _, transport := range []string{"stdio", "http", "sse"} {
		t.Run(transport, func(t *testing.T) {
			cfg := stdio(t, "test")
			switch transport {
			case "http":
				cfg = spec.MCPServer{Name: "test", URL: httpServer(t), Prefix: true}
			case "sse":
				cfg = spec.MCPServer{Name: "test", URL: httpServer(t, "-sse"), SSE: true, Prefix: true}
			}
			ts, _ := load(t, options(approval.Yolo{}), cfg)
			for i := range 20 {
				var n atomic.Int32
				ctx := toolset.WithProgress(context.Background(), func(toolset.Progress) { n.Add(1) })
				// Progress 0, 1 and 2, the last just before the result.
				r := call(ctx, ts, "test__slow", `{"steps":2,"interval_ms":0}`)
				if r.IsError() {
					t.Fatalf("call %d: %+v", i, r)
				}
				if got := n.Load(); got != 3 {
					t.Fatalf("call %d: %d progress notifications delivered before the result, want 3", i, got)
				}
			}
		})
	}
}

// TestHardMaximum: progress restarts a call's timeout, but a call that
// keeps reporting progress (every 100 ms, for a minute) ends at the hard
// maximum: MaxCallFactor times the timeout, or Options.CallMaximum.
func TestHardMaximum(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		maximum time.Duration // Options.CallMaximum
		want    time.Duration
	}{
		{"10 times the timeout", 500 * time.Millisecond, 0, 5 * time.Second},
		{"a 5s timeout, a set maximum", 5 * time.Second, 2 * time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := stdio(t, "test")
			cfg.Timeout = tt.timeout
			opts := options(approval.Yolo{})
			opts.CallMaximum = tt.maximum
			ts, _ := load(t, opts, cfg)
			start := time.Now()
			r := call(context.Background(), ts, "test__slow", `{"steps":600,"interval_ms":100}`)
			took := time.Since(start)
			want := fmt.Sprintf("MCP tool test__slow was stopped at the hard maximum of %s for one call (progress restarts its %s timeout, up to that bound)", tt.want, tt.timeout)
			if r.Kind != toolset.Failed || r.Message != want || r.Brief != "Timed out" {
				t.Fatalf("result %+v, want the message %q", r, want)
			}
			if took < tt.want || took > tt.want+20*time.Second {
				t.Fatalf("the call ended after %s, want %s", took, tt.want)
			}
			assertCancelled(t, ts)
		})
	}
}

// watchedToolset is a toolset of the servers' tools kept in step with
// their changes, as the agent keeps its own.
func watchedToolset(t *testing.T, ts *toolset.Toolset, l *mcpclient.Loaded) {
	t.Helper()
	for _, srv := range l.Servers {
		current := ts.Names()
		srv.Watch(func(tools []*mcpclient.Tool) {
			add := make([]toolset.Tool, len(tools))
			for i, tl := range tools {
				add[i] = tl
			}
			ts.Replace(current, add...)
			current = current[:0]
			for _, tl := range tools {
				current = append(current, tl.Spec().Name)
			}
		})
	}
}

// TestToolsChangedDuringCall: a tool a server adds during a call is in the
// toolset when the call returns, so the next step offers it; a storm of
// 5,000 list_changed costs a few listings a second, not one each.
func TestToolsChangedDuringCall(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		for _, storm := range []int{1, 5000} {
			t.Run(fmt.Sprintf("%s %d list_changed", transport, storm), func(t *testing.T) {
				opts, logs := logged(options(approval.Yolo{}))
				cfg := stdio(t, "test", "-storm", fmt.Sprint(storm))
				tool, args := "test__retool", `{"add":"fresh","wait":true}`
				if transport == "http" {
					seen := newChanges()
					server := inprocServer(seen)
					h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
					cfg = spec.MCPServer{Name: "test", URL: serveHTTP(t, stormHandler(h, storm, seen)), Prefix: true}
					tool, args = "test__grow", `{"name":"fresh"}`
				}
				ts, l := load(t, opts, cfg)
				watchedToolset(t, ts, l)
				start := time.Now()
				if r := call(context.Background(), ts, tool, args); r.IsError() {
					t.Fatalf("%s: %+v", tool, r)
				}
				if _, ok := ts.Find("test__fresh"); !ok {
					t.Fatalf("test__fresh is not in the toolset when the call returns: %v", ts.Names())
				}
				if r := call(context.Background(), ts, "test__fresh", `{}`); r.OutputText() != "I am fresh" {
					t.Fatalf("fresh: %+v", r)
				}
				// The listings after the storm are done when a later call
				// returns.
				took := time.Since(start)
				listings := strings.Count(logs.String(), "MCP server changed its tools")
				// At most about 4 a second (one each 250 ms), and one at once.
				if most := 3 + int(took/(200*time.Millisecond)); listings < 1 || listings > most {
					t.Fatalf("%d listings for %d list_changed in %s; want 1 to %d", listings, storm, took, most)
				}
			})
		}
	}
}

// TestNonJSONLines: lines a stdio server prints on stdout that are not
// JSON are logged and skipped; the server works on.
func TestNonJSONLines(t *testing.T) {
	opts, logs := logged(options(approval.Yolo{}))
	ts, _ := load(t, opts, stdio(t, "noisy", "-noise"))
	for i := range 3 {
		if r := call(context.Background(), ts, "noisy__echo", fmt.Sprintf(`{"text":"%d"}`, i)); r.OutputText() != fmt.Sprint(i) {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	for _, line := range []string{`"mcpserver starting (not JSON)"`, `"a log line, not JSON"`, `42`, `"{\"jsonrpc\": broken"`} {
		want := "MCP server printed a line that is not JSON on stdout; skipped: server=noisy line=" + line
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("log lacks %s:\n%s", want, logs)
		}
	}
	if !strings.Contains(logs.String(), "they are skipped without being logged: server=noisy") {
		t.Fatalf("the log does not say when it stops logging non-JSON lines:\n%s", logs)
	}
}

// TestMessageOverLimit: a message over MaxMessageBytes is never read whole:
// over stdio the line is skipped and its call answered with an error at
// once, over HTTP the session ends and the next call has a new one; both
// are logged with the server's name.
func TestMessageOverLimit(t *testing.T) {
	tests := []struct {
		transport string
		message   string
		log       string
	}{
		{"stdio", "Error running tool: MCP server test: MCP server test sent a message over the limit of 16777216 bytes (mcpclient.MaxMessageBytes); it was skipped",
			"MCP server test sent a message over the limit of 16777216 bytes (mcpclient.MaxMessageBytes); it was skipped: server=test"},
		{"http", "Error running tool: MCP server test stopped during the call: ",
			"MCP server test sent a message over the limit of 16777216 bytes (mcpclient.MaxMessageBytes); it was refused and the session ends: server=test"},
		{"sse", "Error running tool: MCP server test stopped during the call: ",
			"MCP server test sent a message over the limit of 16777216 bytes (mcpclient.MaxMessageBytes); it was refused and the session ends: server=test"},
	}
	for _, tt := range tests {
		t.Run(tt.transport, func(t *testing.T) {
			cfg := stdio(t, "test")
			switch tt.transport {
			case "http":
				cfg = spec.MCPServer{Name: "test", URL: httpServer(t), Prefix: true}
			case "sse":
				cfg = spec.MCPServer{Name: "test", URL: httpServer(t, "-sse"), SSE: true, Prefix: true}
			}
			opts, logs := logged(options(approval.Yolo{}))
			ts, _ := load(t, opts, cfg)
			r := call(context.Background(), ts, "test__big", fmt.Sprintf(`{"chars":%d}`, mcpclient.MaxMessageBytes+1000))
			if !r.IsError() || !strings.HasPrefix(r.Message, tt.message) {
				t.Fatalf("over the limit: %.500v, want %q", r, tt.message)
			}
			if !strings.Contains(logs.String(), tt.log) {
				t.Fatalf("log lacks %q:\n%.2000s", tt.log, logs)
			}
			if r := call(context.Background(), ts, "test__echo", `{"text":"after"}`); r.OutputText() != "after" {
				t.Fatalf("after: %+v", r)
			}
		})
	}
}
