package mcpclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/supervise"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// serverBin builds the test MCP server.
func serverBin(t testing.TB) string {
	t.Helper()
	p, err := testbin.Build("host/testdata/mcpserver", "mcpserver")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// httpServer starts the test server in HTTP mode (with args such as -sse)
// and returns its URL.
func httpServer(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(serverBin(t), append([]string{"-http", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the server's URL: %v", err)
	}
	return strings.TrimSpace(line)
}

func stdio(t testing.TB, name string, args ...string) spec.MCPServer {
	return spec.MCPServer{Name: name, Command: serverBin(t), Args: args, Prefix: true}
}

func testEnv(k string) string {
	return map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/home/test", "KOSONG_TEST_SECRET": "sk-do-not-leak", "KOSONG_TEST_TOKEN": "tok-123"}[k]
}

func options(d approval.Decider) mcpclient.Options {
	return mcpclient.Options{Decider: d, Getenv: testEnv, StartTimeout: 20 * time.Second, RestartBackoff: 10 * time.Millisecond}
}

// load starts the servers and returns a toolset of their tools.
func load(t testing.TB, opts mcpclient.Options, cfgs ...spec.MCPServer) (*toolset.Toolset, *mcpclient.Loaded) {
	t.Helper()
	l := mcpclient.LoadAll(context.Background(), cfgs, opts)
	l.Wait(context.Background())
	t.Cleanup(l.Close)
	ts := toolset.New(nil)
	for _, st := range l.Status {
		if st.Tool == nil {
			continue
		}
		if err := ts.Add(st.Tool); err != nil {
			t.Fatal(err)
		}
	}
	return ts, l
}

func call(ctx context.Context, ts *toolset.Toolset, name, args string) toolset.Result {
	return ts.Handle(ctx, providers.ToolCall{ID: "call-" + name, Name: name, Arguments: args}).Result()
}

func TestCalls(t *testing.T) {
	png := "data:image/png;base64,iVBORw0KGgo="
	tests := []struct {
		name, tool, args string
		kind             toolset.Kind
		message          string
		output           []providers.ContentPart
	}{
		{"text", "test__echo", `{"text":"hi"}`, toolset.Ok, "", []providers.ContentPart{providers.TextPart("hi")}},
		{"numbers", "test__add", `{"a":2,"b":40.5}`, toolset.Ok, "", []providers.ContentPart{providers.TextPart("42.5")}},
		{"isError", "test__fail", `{"message":"boom"}`, toolset.Failed, mcpclient.ErrorMessage, []providers.ContentPart{providers.TextPart("failed: boom")}},
		{"schema checked by the host", "test__echo", `{"text":1}`, toolset.Failed, `Error validating JSON arguments: parameter "text": type: 1 has type "integer", want "string"`, nil},
		{"every content type", "test__media", `{}`, toolset.Ok, "", []providers.ContentPart{
			providers.TextPart("some text"),
			{Type: providers.PartImage, ImageURL: png},
			providers.TextPart("[audio: audio/wav, 12 bytes; audio is not passed to the model]"),
			providers.TextPart(`[resource link: file:///tmp/report.txt, name "report", text/plain, 42 bytes: the report]`),
			providers.TextPart("[embedded resource: mem://notes, text/markdown]\n# Notes"),
			providers.TextPart("[embedded resource: mem://blob, application/octet-stream, 3 bytes of binary data]"),
			{Type: providers.PartImage, ImageURL: png},
			providers.TextPart("[embedded resource: mem://log, text/plain; charset=utf-8]\nline one\nline two"),
		}},
		{"within the budget", "test__big", `{"chars":99996}`, toolset.Ok, "", []providers.ContentPart{
			providers.TextPart(strings.Repeat("x", 99996)), providers.TextPart("tail")}},
		{"over the budget", "test__big", `{"chars":99998}`, toolset.Ok, "Output is truncated to fit in the message.", []providers.ContentPart{
			providers.TextPart(strings.Repeat("x", 99998)), providers.TextPart("ta" + mcpclient.TruncatedMarker)}},
	}
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
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := call(context.Background(), ts, tt.tool, tt.args)
					if r.Kind != tt.kind || r.Message != tt.message {
						t.Fatalf("kind %v message %q, want %v %q (%+v)", r.Kind, r.Message, tt.kind, tt.message, r)
					}
					if fmt.Sprint(r.Output) != fmt.Sprint(tt.output) {
						t.Fatalf("output %.300v\nwant %.300v", r.Output, tt.output)
					}
				})
			}
		})
	}
}

func TestSpecAndSource(t *testing.T) {
	ts, l := load(t, options(approval.Yolo{}), stdio(t, "test"))
	tool, ok := ts.Find("test__echo")
	if !ok {
		t.Fatalf("tools: %v", ts.Names())
	}
	s := tool.Spec()
	var schema map[string]any
	if err := json.Unmarshal(s.Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Fatalf("parameters %s", s.Parameters)
	}
	if s.Description != "Echo the text back." || s.Timeout != 0 || s.Source != "mcp server test ("+serverBin(t)+")" {
		t.Fatalf("spec %+v", s)
	}
	if len(l.Servers) != 1 || l.Servers[0].Source() != s.Source || len(l.Servers[0].Offered()) != 15 {
		t.Fatalf("servers %+v", l.Servers)
	}
}

// A server's hints become the tools' annotations: readOnlyHint and
// idempotentHint when true, destructiveHint and openWorldHint as sent; a
// tool without hints has every annotation unknown.
func TestAnnotations(t *testing.T) {
	ts, _ := load(t, options(approval.Yolo{}), stdio(t, "test", "-write"))
	find := func(name string) toolset.Annotations {
		tl, ok := ts.Find(name)
		if !ok {
			t.Fatalf("no tool %s in %v", name, ts.Names())
		}
		return toolset.AnnotationsOf(tl)
	}
	str := func(a toolset.Annotations) string {
		s := func(b *bool) string {
			if b == nil {
				return "?"
			}
			return fmt.Sprint(*b)
		}
		return strings.Join([]string{s(a.ReadOnly), s(a.Destructive), s(a.Idempotent), s(a.OpenWorld)}, " ")
	}
	for name, want := range map[string]string{"test__echo": "true ? ? false", "test__write": "? true true ?", "test__add": "? ? ? ?"} {
		if got := str(find(name)); got != want {
			t.Errorf("%s: read-only destructive idempotent open-world = %s, want %s", name, got, want)
		}
	}
}

func TestApproval(t *testing.T) {
	var mu sync.Mutex
	var asked []approval.Request
	answer := approval.Decision{Approved: true}
	d := approval.DeciderFunc(func(_ context.Context, r approval.Request) (approval.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r)
		return answer, nil
	})
	ts, _ := load(t, options(d), stdio(t, "test"))
	if r := call(context.Background(), ts, "test__echo", `{"text":"hi"}`); r.IsError() {
		t.Fatalf("approved: %+v", r)
	}
	req := asked[0]
	if req.Action != "mcp:test__echo" || req.Description != "Call MCP tool `test__echo`." || req.ToolCallID != "call-test__echo" ||
		req.ToolName != "test__echo" || len(req.Display) != 1 || string(req.Display[0].Data) != `"test__echo {\"text\":\"hi\"}"` {
		t.Fatalf("request %+v", req)
	}
	for _, fb := range []string{"", "use the other tool"} {
		answer = approval.Decision{Feedback: fb}
		r := call(context.Background(), ts, "test__echo", `{"text":"hi"}`)
		if want := toolset.RejectedResult(fb); r.Kind != toolset.Rejected || r.Message != want.Message || r.Feedback != fb {
			t.Fatalf("rejected: %+v", r)
		}
	}
	// No decider: rejected.
	ts, _ = load(t, options(nil), stdio(t, "test"))
	if r := call(context.Background(), ts, "test__echo", `{"text":"hi"}`); r.Kind != toolset.Rejected {
		t.Fatalf("no decider: %+v", r)
	}
}

func TestNamesAndFilters(t *testing.T) {
	tests := []struct {
		name   string
		cfg    func(*spec.MCPServer)
		loaded []string
		failed map[string]string
	}{
		{"prefixed", func(*spec.MCPServer) {}, []string{"s__add", "s__big", "s__bigimage", "s__cancelled", "s__crash", "s__echo", "s__env", "s__fail", "s__freeze", "s__media", "s__pid", "s__retool", "s__slow", "s__spawn", "s__tasky"}, nil},
		{"bare names", func(c *spec.MCPServer) { c.Prefix = false; c.EnabledTools = []string{"echo", "add"} }, []string{"add", "echo"}, nil},
		{"disabled", func(c *spec.MCPServer) {
			c.DisabledTools = []string{"crash", "spawn", "env", "media", "big", "bigimage", "slow", "cancelled", "fail", "retool", "pid", "freeze", "tasky"}
		}, []string{"s__add", "s__echo"}, nil},
		{"enabled minus disabled", func(c *spec.MCPServer) { c.EnabledTools = []string{"echo", "add"}; c.DisabledTools = []string{"add"} }, []string{"s__echo"}, nil},
		{"enabled tool missing", func(c *spec.MCPServer) { c.EnabledTools = []string{"echo", "nope"} }, []string{"s__echo"},
			map[string]string{"s__nope": "MCP server s has no tool nope; it offers add, big, bigimage, cancelled, crash, echo, env, fail, freeze, media, pid, retool, slow, spawn, tasky"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := stdio(t, "s")
			tt.cfg(&cfg)
			ts, l := load(t, options(approval.Yolo{}), cfg)
			names := ts.Names()
			slicesSort(names)
			if fmt.Sprint(names) != fmt.Sprint(tt.loaded) {
				t.Fatalf("loaded %v, want %v", names, tt.loaded)
			}
			failed := map[string]string{}
			for _, st := range l.Status {
				if st.Err != nil {
					failed[st.Name] = st.Err.Error()
				}
			}
			if len(failed) != len(tt.failed) || fmt.Sprint(failed) != fmt.Sprint(tt.failed) {
				t.Fatalf("failed %v, want %v", failed, tt.failed)
			}
		})
	}
}

func slicesSort(s []string) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

// TestStartFailures: servers that cannot start are reported, in parallel
// with one that starts, and none waits longer than the start timeout.
func TestStartFailures(t *testing.T) {
	opts := options(approval.Yolo{})
	opts.StartTimeout = 3 * time.Second
	bin := serverBin(t)
	// An HTTP server that never opens the event stream, and one that knows
	// no such endpoint.
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sse-hangs" {
			<-r.Context().Done()
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(web.Close)
	cfgs := []spec.MCPServer{
		{Name: "missing", Command: "kosong-no-such-mcp-server", Prefix: true},
		{Name: "exits", Command: bin, Args: []string{"-exit"}, Prefix: true},
		{Name: "hangs", Command: bin, Args: []string{"-hang"}, Prefix: true},
		{Name: "nohttp", URL: "http://127.0.0.1:1/mcp", Prefix: true},
		{Name: "ssehangs", URL: web.URL + "/sse-hangs", SSE: true, Prefix: true},
		{Name: "sse404", URL: web.URL + "/nope", SSE: true, Prefix: true},
		stdio(t, "good"),
	}
	start := time.Now()
	ts, l := load(t, opts, cfgs...)
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("loading took %s", d)
	}
	want := map[string]string{
		"missing":  `MCP server missing: start kosong-no-such-mcp-server: executable file not found in $PATH`,
		"exits":    `MCP server exits: ` + bin + ` failed the MCP handshake: `,
		"hangs":    `MCP server hangs: no answer to the MCP handshake within 3s; its last stderr lines: mcpserver: hanging (-hang)`,
		"nohttp":   `MCP server nohttp: connect to http://127.0.0.1:1/mcp: `,
		"ssehangs": `MCP server ssehangs: no answer to the MCP handshake within 3s`,
		"sse404":   `MCP server sse404: connect to ` + web.URL + `/nope: failed to connect: Not Found`,
	}
	for _, st := range l.Status {
		if st.Err == nil {
			continue
		}
		w, ok := want[st.Server]
		if !ok || st.Name != "" || !strings.HasPrefix(st.Err.Error(), w) {
			t.Errorf("%s: %v, want %q", st.Server, st.Err, w)
		}
		if st.Server == "exits" && !strings.HasSuffix(st.Err.Error(), "its last stderr lines: mcpserver: refusing to start (-exit)") {
			t.Errorf("exits: %v", st.Err)
		}
		delete(want, st.Server)
	}
	if len(want) > 0 {
		t.Errorf("not reported: %v", want)
	}
	if r := call(context.Background(), ts, "good__echo", `{"text":"ok"}`); r.OutputText() != "ok" {
		t.Fatalf("good server: %+v", r)
	}
}

func TestProgressResetsTimeout(t *testing.T) {
	cfg := stdio(t, "test")
	cfg.Timeout = 2 * time.Second
	var got []toolset.Progress
	var mu sync.Mutex
	opts := options(approval.Yolo{})
	opts.OnProgress = func(p toolset.Progress) { mu.Lock(); got = append(got, p); mu.Unlock() }
	ts, _ := load(t, opts, cfg)
	// 8 steps of 500ms: 4s in all, never 2s without progress.
	r := call(context.Background(), ts, "test__slow", `{"steps":8,"interval_ms":500}`)
	if r.IsError() || r.OutputText() != "done after 8 steps" {
		t.Fatalf("slow: %+v", r)
	}
	// Every notification is delivered before the result.
	mu.Lock()
	n := len(got)
	if n != 9 || got[7] != (toolset.Progress{Server: "test", Tool: "test__slow", ToolCallID: "call-test__slow", Progress: 7, Total: 8, Message: "step 7 of 8"}) {
		t.Fatalf("progress %+v", got)
	}
	for i, p := range got {
		if p.Progress != float64(i) {
			t.Fatalf("progress %+v", got)
		}
	}
	mu.Unlock()
	// The context's callback wins over Options.OnProgress.
	var own atomic.Int32
	ctx := toolset.WithProgress(context.Background(), func(toolset.Progress) { own.Add(1) })
	if r := call(ctx, ts, "test__slow", `{"steps":1,"interval_ms":100}`); r.IsError() || own.Load() < 1 {
		t.Fatalf("own callback: %+v, %d calls", r, own.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("Options.OnProgress called for a call with its own callback: %+v", got[n:])
	}
}

func TestTimeoutCancelsOnTheServer(t *testing.T) {
	cfg := stdio(t, "test")
	cfg.Timeout = time.Second
	ts, _ := load(t, options(approval.Yolo{}), cfg)
	start := time.Now()
	r := call(context.Background(), ts, "test__slow", `{"steps":1,"interval_ms":60000}`)
	if r.Kind != toolset.Failed || r.Message != "MCP tool test__slow timed out after 1s without progress" || r.Brief != "Timed out" {
		t.Fatalf("slow: %+v", r)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("timed out after %s", d)
	}
	assertCancelled(t, ts)
}

// assertCancelled waits until the server saw a call of slow cancelled.
func assertCancelled(t *testing.T, ts *toolset.Toolset) {
	t.Helper()
	if r := call(context.Background(), ts, "test__cancelled", `{}`); r.OutputText() != "slow was cancelled" {
		t.Fatalf("cancelled: %+v", r)
	}
}

func TestCancellation(t *testing.T) {
	ts, _ := load(t, options(approval.Yolo{}), stdio(t, "test"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel once the server has started the call (its first progress).
	ctx = toolset.WithProgress(ctx, func(toolset.Progress) { cancel() })
	r := call(ctx, ts, "test__slow", `{"steps":1,"interval_ms":60000}`)
	if r.Kind != toolset.Failed || !r.Runtime || r.Message != "Error running tool: the call was cancelled: context canceled" {
		t.Fatalf("slow: %+v", r)
	}
	assertCancelled(t, ts)
}

func TestCrashRestart(t *testing.T) {
	for _, transport := range []string{"stdio"} {
		t.Run(transport, func(t *testing.T) {
			ts, _ := load(t, options(approval.Yolo{}), stdio(t, "test"))
			crashed := "Error running tool: MCP server test stopped during the call: the server exited (exit status 3); its last stderr lines: mcpserver: crashing on purpose"
			for i := 0; i <= supervise.MaxRestarts; i++ {
				if r := call(context.Background(), ts, "test__crash", `{}`); r.Kind != toolset.Failed || !r.Runtime || r.Message != crashed {
					t.Fatalf("crash %d: %+v", i, r)
				}
				r := call(context.Background(), ts, "test__echo", `{"text":"back"}`)
				if i < supervise.MaxRestarts {
					if r.IsError() || r.OutputText() != "back" {
						t.Fatalf("after crash %d: %+v", i, r)
					}
					continue
				}
				want := "Error running tool: MCP server test is down: the server exited (exit status 3); its last stderr lines: mcpserver: crashing on purpose (restarted 3 times in 1m0s)"
				if r.Message != want {
					t.Fatalf("after crash %d: %q, want %q", i, r.Message, want)
				}
			}
		})
	}
}

func TestEnvironment(t *testing.T) {
	dir := t.TempDir()
	cfg := stdio(t, "test")
	cfg.Env = map[string]string{"TOKEN": "${KOSONG_TEST_TOKEN}", "HOME": "/elsewhere", "PLAIN": "a$b"}
	cfg.Cwd = dir
	ts, _ := load(t, options(approval.Yolo{}), cfg)
	r := call(context.Background(), ts, "test__env", `{"names":[]}`)
	lines := strings.Split(strings.TrimSpace(r.OutputText()), "\n")
	wd, _ := filepath.EvalSymlinks(dir)
	want := []string{"cwd=" + wd, "PATH=" + os.Getenv("PATH"), "HOME=/elsewhere", "PLAIN=a$b", "TOKEN=tok-123", "KOSONG_PROCESS_TAG="}
	// The tag (proc.TagEnv) differs each time: compare its name only.
	if n := len(lines); n > 0 && strings.HasPrefix(lines[n-1], "KOSONG_PROCESS_TAG=") {
		lines[n-1] = "KOSONG_PROCESS_TAG="
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Fatalf("environment %q\nwant %q", lines, want)
	}
}

func TestCloseBeforeCall(t *testing.T) {
	ts, l := load(t, options(approval.Yolo{}), stdio(t, "test"))
	l.Close()
	r := call(context.Background(), ts, "test__echo", `{"text":"x"}`)
	if r.Message != "Error running tool: MCP server test is closed" {
		t.Fatalf("after close: %+v", r)
	}
}

var errBoom = errors.New("boom")

func TestDeciderError(t *testing.T) {
	d := approval.DeciderFunc(func(context.Context, approval.Request) (approval.Decision, error) {
		return approval.Decision{}, errBoom
	})
	ts, _ := load(t, options(d), stdio(t, "test"))
	if r := call(context.Background(), ts, "test__echo", `{"text":"x"}`); r.Message != "Error running tool: approval: boom" {
		t.Fatalf("decider error: %+v", r)
	}
}

// TestWatchToolsChanged: a server's list_changed has it listed again, with
// its filters; a Watch after a change hears of it at once.
func TestWatchToolsChanged(t *testing.T) {
	cfg := stdio(t, "test")
	cfg.DisabledTools = []string{"hidden"}
	ts, l := load(t, options(approval.Yolo{}), cfg)
	srv := l.Servers[0]
	for _, args := range []string{`{"add":"hidden"}`, `{"add":"extra","remove":"add"}`} {
		if r := call(context.Background(), ts, "test__retool", args); r.OutputText() != "done" {
			t.Fatalf("retool %s: %+v", args, r)
		}
	}
	names := func(tools []*mcpclient.Tool) string {
		var n []string
		for _, tl := range tools {
			n = append(n, tl.Spec().Name)
		}
		slicesSort(n)
		return strings.Join(n, " ")
	}
	const want = "test__big test__bigimage test__cancelled test__crash test__echo test__env test__extra test__fail test__freeze test__media test__pid test__retool test__slow test__spawn test__tasky"
	waitFor(t, "the tools "+want, func() bool { return names(srv.Tools()) == want })
	if offered := srv.Offered(); !slices.Contains(offered, "hidden") || slices.Contains(offered, "add") {
		t.Fatalf("offered %v", offered)
	}
	told := make(chan string, 1)
	srv.Watch(func(tools []*mcpclient.Tool) { told <- names(tools) })
	select {
	case got := <-told:
		if got != want {
			t.Fatalf("Watch was told %s", got)
		}
	default:
		t.Fatal("Watch after a change was not told at once")
	}
	i := slices.IndexFunc(srv.Tools(), func(tl *mcpclient.Tool) bool { return tl.RemoteName() == "extra" })
	if r := srv.Tools()[i].Call(context.Background(), "c1", []byte(`{}`)); r.OutputText() != "I am extra" {
		t.Fatalf("new tool: %+v", r)
	}
}

// TestRestartedServerIsListedAgain: a server may come back from a restart
// with other tools; its watcher is told.
func TestRestartedServerIsListedAgain(t *testing.T) {
	extra := filepath.Join(t.TempDir(), "tools")
	ts, l := load(t, options(approval.Yolo{}), stdio(t, "test", "-extra-tools", extra))
	told := make(chan []*mcpclient.Tool, 10)
	l.Servers[0].Watch(func(tools []*mcpclient.Tool) { told <- tools })
	if err := os.WriteFile(extra, []byte("upgraded\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := call(context.Background(), ts, "test__crash", `{}`); !r.Runtime {
		t.Fatalf("crash: %+v", r)
	}
	if r := call(context.Background(), ts, "test__echo", `{"text":"back"}`); r.OutputText() != "back" {
		t.Fatalf("after the restart: %+v", r)
	}
	select {
	case tools := <-told:
		if !slices.ContainsFunc(tools, func(tl *mcpclient.Tool) bool { return tl.Spec().Name == "test__upgraded" }) {
			t.Fatalf("told %d tools, without test__upgraded", len(tools))
		}
	case <-time.After(30 * time.Second): // a guard against a hang, not synchronisation
		t.Fatal("the watcher was not told of the restarted server's tools")
	}
}

// TestRelistFailureKeepsTools: when listing a changed server again fails,
// its tools stay as they were, and the failure is logged.
func TestRelistFailureKeepsTools(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() })
	logs := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	opts := options(approval.Yolo{})
	opts.Logger = hclog.New(&hclog.LoggerOptions{Output: logFile, Level: hclog.Warn})
	ts, l := load(t, opts, stdio(t, "test"))
	srv := l.Servers[0]
	told := make(chan int, 10)
	srv.Watch(func(tools []*mcpclient.Tool) { told <- len(tools) })
	before := len(srv.Tools())
	if r := call(context.Background(), ts, "test__retool", `{"add":"extra","fail_list":true}`); r.OutputText() != "done" {
		t.Fatalf("retool: %+v", r)
	}
	const warning = `listing the tools of an MCP server again failed; keeping the old list: server=test error="calling \"tools/list\": tools/list is broken (fail_list)"`
	waitFor(t, "the warning", func() bool { return strings.Contains(logs(), warning) })
	if n := len(srv.Tools()); n != before {
		t.Fatalf("%d tools after the failed listing, want %d", n, before)
	}
	select {
	case n := <-told:
		t.Fatalf("the watcher was told of %d tools", n)
	default:
	}
}

// waitFor waits for cond, which the server process brings about on its own
// time, within a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
