package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/mcpserver"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

type fakeTool struct {
	spec toolset.Spec
	call func(ctx context.Context, id string, args json.RawMessage) toolset.Result
}

func (f fakeTool) Spec() toolset.Spec { return f.spec }
func (f fakeTool) Call(ctx context.Context, id string, args json.RawMessage) toolset.Result {
	return f.call(ctx, id, args)
}

const echoSchema = `{"type":"object","properties":{"text":{"type":"string","description":"The text."}},"required":["text"],"additionalProperties":false}`

// tools are a toolset like a plugin's: Echo, Danger (asks approval as
// Shell does), Fail, Picture, and two whose schemas need care.
func tools(t *testing.T, d approval.Decider) *toolset.Toolset {
	ts := toolset.New(nil)
	add := func(name, schema string, call func(ctx context.Context, id string, args json.RawMessage) toolset.Result) {
		if err := ts.Add(fakeTool{spec: toolset.Spec{Name: name, Description: name + " does things.", Parameters: json.RawMessage(schema)}, call: call}); err != nil {
			t.Fatal(err)
		}
	}
	add("Echo", echoSchema, func(_ context.Context, _ string, args json.RawMessage) toolset.Result {
		var in struct{ Text string }
		_ = json.Unmarshal(args, &in)
		return toolset.Result{Output: []providers.ContentPart{providers.TextPart(in.Text)}}
	})
	add("Danger", `{"type":"object"}`, func(ctx context.Context, id string, _ json.RawMessage) toolset.Result {
		dec, err := d.Decide(ctx, approval.Request{ToolCallID: id, ToolName: "Danger", Action: "run command", Description: "Run command `rm -rf /tmp/x`"})
		if err != nil {
			return toolset.RuntimeError(err)
		}
		if !dec.Approved {
			return toolset.RejectedResult(dec.Feedback)
		}
		return toolset.Result{Message: "Command executed successfully.", Output: []providers.ContentPart{providers.TextPart("removed")}}
	})
	add("Fail", `{"type":"object"}`, func(context.Context, string, json.RawMessage) toolset.Result {
		return toolset.Result{Kind: toolset.Failed, Message: "Command failed with exit code 2", Output: []providers.ContentPart{providers.TextPart("ls: x: No such file")}}
	})
	add("Picture", `{"type":"object"}`, func(context.Context, string, json.RawMessage) toolset.Result {
		return toolset.Result{Output: []providers.ContentPart{{Type: providers.PartImage, ImageURL: "data:image/png;base64,iVBORw0KGgo="},
			{Type: providers.PartImage, ImageURL: "https://example.com/x.png"}}}
	})
	add("Untyped", `{"properties":{"n":{"type":"integer"}}}`, func(context.Context, string, json.RawMessage) toolset.Result { return toolset.Result{} })
	add("Stringy", `{"type":"string"}`, func(context.Context, string, json.RawMessage) toolset.Result { return toolset.Result{} })
	return ts
}

// connect serves ts in memory and connects a go-sdk client to it.
func connect(t *testing.T, ts *toolset.Toolset, a *mcpserver.Approvals, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcpserver.New(ts, a, mcpserver.Options{Version: "test"})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func texts(res *mcp.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out = append(out, c.Text)
		case *mcp.ImageContent:
			out = append(out, "image "+c.MIMEType+" "+string(c.Data[:4]))
		case *mcp.ResourceLink:
			out = append(out, "link "+c.URI)
		}
	}
	return strings.Join(out, "|")
}

func TestListTools(t *testing.T) {
	cs := connect(t, tools(t, approval.Yolo{}), mcpserver.NewApprovals(true), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	if len(got) != 5 || got["Stringy"] != nil {
		t.Fatalf("tools %v", got)
	}
	schema, _ := json.Marshal(got["Echo"].InputSchema)
	if got["Echo"].Description != "Echo does things." || !jsonEqual(schema, []byte(echoSchema)) {
		t.Fatalf("Echo: %q %s", got["Echo"].Description, schema)
	}
	schema, _ = json.Marshal(got["Untyped"].InputSchema)
	if !jsonEqual(schema, []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)) {
		t.Fatalf("Untyped: %s", schema)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("protocol %s", v)
	}
}

type annotatedTool struct {
	fakeTool
	ann toolset.Annotations
}

func (a annotatedTool) Annotations() toolset.Annotations { return a.ann }

// A tool's annotations reach MCP clients as hints; a tool declaring none
// has no annotations, so clients apply MCP's defaults.
func TestListToolsAnnotations(t *testing.T) {
	yes, no := true, false
	ts := toolset.New(nil)
	noop := func(context.Context, string, json.RawMessage) toolset.Result { return toolset.Result{} }
	for _, tl := range []toolset.Tool{
		annotatedTool{fakeTool{spec: toolset.Spec{Name: "Look", Parameters: json.RawMessage(`{"type":"object"}`)}, call: noop},
			toolset.Annotations{ReadOnly: &yes, Destructive: &no, OpenWorld: &no}},
		annotatedTool{fakeTool{spec: toolset.Spec{Name: "Run", Parameters: json.RawMessage(`{"type":"object"}`)}, call: noop},
			toolset.Annotations{ReadOnly: &no, Destructive: &yes, Idempotent: &yes, OpenWorld: &yes}},
		fakeTool{spec: toolset.Spec{Name: "Plain", Parameters: json.RawMessage(`{"type":"object"}`)}, call: noop},
	} {
		if err := ts.Add(tl); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, ts, mcpserver.NewApprovals(true), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range res.Tools {
		b, _ := json.Marshal(tl.Annotations)
		got[tl.Name] = string(b)
	}
	want := map[string]string{
		"Look":  `{"destructiveHint":false,"idempotentHint":false,"openWorldHint":false,"readOnlyHint":true}`,
		"Run":   `{"destructiveHint":true,"idempotentHint":true,"openWorldHint":true,"readOnlyHint":false}`,
		"Plain": `null`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: annotations %s, want %s", name, got[name], w)
		}
	}
}

// TestToolsFollowTheToolset: when the toolset's tools are replaced (an MCP
// server of the agent changed its own), clients are told and list the new
// tools; a removed tool's call is an error.
func TestToolsFollowTheToolset(t *testing.T) {
	ts := tools(t, approval.Yolo{})
	changed := make(chan struct{}, 10)
	cs := connect(t, ts, mcpserver.NewApprovals(true), &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	newEcho := fakeTool{spec: toolset.Spec{Name: "Echo", Description: "Echo, second edition.", Parameters: json.RawMessage(`{"type":"object"}`)},
		call: func(context.Context, string, json.RawMessage) toolset.Result {
			return toolset.Result{Output: []providers.ContentPart{providers.TextPart("v2")}}
		}}
	added := fakeTool{spec: toolset.Spec{Name: "Added", Description: "Added does things.", Parameters: json.RawMessage(`{"type":"object"}`)},
		call: func(context.Context, string, json.RawMessage) toolset.Result {
			return toolset.Result{Output: []providers.ContentPart{providers.TextPart("added")}}
		}}
	if errs := ts.Replace([]string{"Fail", "Echo"}, newEcho, added); len(errs) > 0 {
		t.Fatal(errs)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second): // a guard against a hang, not synchronisation
		t.Fatal("the client was not told that the tools changed")
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl.Description
	}
	if len(got) != 5 || got["Added"] != "Added does things." || got["Echo"] != "Echo, second edition." || got["Fail"] != "" {
		t.Fatalf("tools %v", got)
	}
	if r := callTool(t, cs, "Added", map[string]any{}); texts(r) != "added" {
		t.Fatalf("Added: %+v", r)
	}
	if r := callTool(t, cs, "Echo", map[string]any{}); texts(r) != "v2" {
		t.Fatalf("Echo: %+v", r)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Fail", Arguments: map[string]any{}}); err == nil {
		t.Fatal("a removed tool was called")
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

func TestResults(t *testing.T) {
	cs := connect(t, tools(t, approval.Yolo{}), mcpserver.NewApprovals(true), nil)
	tests := []struct {
		tool    string
		args    any
		isError bool
		want    string
	}{
		{"Echo", map[string]any{"text": "hi"}, false, "hi"},
		{"Danger", nil, false, "Command executed successfully.|removed"},
		{"Fail", nil, true, "Command failed with exit code 2|ls: x: No such file"},
		{"Echo", map[string]any{"text": 1}, true, `Error validating JSON arguments: parameter "text": type: 1 has type "integer", want "string"`},
		{"Picture", nil, false, "image image/png \x89PNG|link https://example.com/x.png"},
		{"Untyped", nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := callTool(t, cs, tt.tool, tt.args)
			if res.IsError != tt.isError || texts(res) != tt.want {
				t.Fatalf("isError %v content %q, want %v %q", res.IsError, texts(res), tt.isError, tt.want)
			}
		})
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "Stringy"}); err == nil {
		t.Fatal("a tool not served was called")
	}
}

const rejected = "The tool call is rejected by the user. Stop what you are doing and wait for the user to tell you how to proceed."

func TestApprovals(t *testing.T) {
	type answer struct {
		action  string
		content map[string]any
	}
	tests := []struct {
		name    string
		yolo    bool
		elicit  bool
		answers []answer // one per call
		want    []string // content of each call; "" = approved
		asked   int
	}{
		{"no elicitation: not run, says why", false, false, []answer{{}}, []string{mcpserver.NoElicitationMessage}, 0},
		{"no elicitation, yolo", true, false, []answer{{}}, []string{""}, 0},
		{"yolo does not ask", true, true, []answer{{}}, []string{""}, 0},
		{"approve", false, true, []answer{{"accept", map[string]any{"decision": "approve"}}, {"accept", map[string]any{"decision": "reject"}}},
			[]string{"", rejected}, 2},
		{"reject with feedback", false, true, []answer{{"accept", map[string]any{"decision": "reject", "feedback": " use trash "}}},
			[]string{"The tool call is rejected by the user. User feedback: use trash"}, 1},
		{"decline", false, true, []answer{{"decline", nil}}, []string{rejected}, 1},
		{"cancel", false, true, []answer{{"cancel", nil}}, []string{rejected}, 1},
		{"approve for session", false, true, []answer{{"accept", map[string]any{"decision": "approve for session"}}, {}, {}},
			[]string{"", "", ""}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mcpserver.NewApprovals(tt.yolo)
			var asked atomic.Int32
			var msg atomic.Value
			var copts *mcp.ClientOptions
			if tt.elicit {
				copts = &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					n := asked.Add(1)
					msg.Store(req.Params.Message)
					ans := tt.answers[n-1]
					return &mcp.ElicitResult{Action: ans.action, Content: ans.content}, nil
				}}
			}
			cs := connect(t, tools(t, a), a, copts)
			for i, want := range tt.want {
				res := callTool(t, cs, "Danger", nil)
				if want == "" {
					if res.IsError || texts(res) != "Command executed successfully.|removed" {
						t.Fatalf("call %d: %+v %q", i, res.IsError, texts(res))
					}
				} else if !res.IsError || texts(res) != want {
					t.Fatalf("call %d: %v %q, want %q", i, res.IsError, texts(res), want)
				}
			}
			if int(asked.Load()) != tt.asked {
				t.Fatalf("asked %d times, want %d", asked.Load(), tt.asked)
			}
			if tt.asked > 0 && msg.Load() != "Danger wants approval to run command.\nRun command `rm -rf /tmp/x`" {
				t.Fatalf("message %q", msg.Load())
			}
		})
	}
}

// TestSessionApprovalIsPerPluginAndTool: approving a hostile plugin's
// "run command" for the session does not approve another tool's "run
// command"; the request names the plugin.
func TestSessionApprovalIsPerPluginAndTool(t *testing.T) {
	a := mcpserver.NewApprovals(false)
	var msgs []string
	var mu sync.Mutex
	copts := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		msgs = append(msgs, req.Params.Message)
		if len(msgs) == 1 {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve for session"}}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "reject"}}, nil
	}}
	ts := tools(t, a)
	sneaky := func(ctx context.Context, id string, _ json.RawMessage) toolset.Result {
		dec, err := a.Decide(ctx, approval.Request{ToolCallID: id, Plugin: "hostile", ToolName: "Sneaky", Action: "run command", Description: "Shell: Run command `ls`"})
		if err != nil {
			return toolset.RuntimeError(err)
		}
		if !dec.Approved {
			return toolset.RejectedResult(dec.Feedback)
		}
		return toolset.Result{Output: []providers.ContentPart{providers.TextPart("sneaked")}}
	}
	if err := ts.Add(fakeTool{spec: toolset.Spec{Name: "Sneaky", Description: "Sneaks.", Parameters: json.RawMessage(`{"type":"object"}`)}, call: sneaky}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ts, a, copts)
	if res := callTool(t, cs, "Sneaky", nil); res.IsError || texts(res) != "sneaked" {
		t.Fatalf("Sneaky: %v %q", res.IsError, texts(res))
	}
	if res := callTool(t, cs, "Sneaky", nil); res.IsError {
		t.Fatalf("Sneaky again (approved for the session): %q", texts(res))
	}
	if res := callTool(t, cs, "Danger", nil); !res.IsError || texts(res) != rejected {
		t.Fatalf("Danger ran on Sneaky's session approval: %v %q", res.IsError, texts(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) != 2 || msgs[0] != "Sneaky wants approval to run command. (plugin hostile)\nplugin hostile says:\nShell: Run command `ls`" {
		t.Fatalf("asked %q", msgs)
	}
}

func TestApprovalWithoutCall(t *testing.T) {
	_, err := mcpserver.NewApprovals(false).Decide(context.Background(), approval.Request{ToolCallID: "nope"})
	if err == nil || !strings.Contains(err.Error(), `no MCP tool call in progress (tool call id "nope")`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8080", false, true},
		{"[::1]:0", false, true},
		{"localhost:9000", false, true},
		{"127.1.2.3:0", false, true},
		{":8080", false, false},
		{"0.0.0.0:8080", false, false},
		{"192.168.1.5:80", false, false},
		{"0.0.0.0:8080", true, true},
		{"nonsense", true, false},
	}
	for _, tt := range tests {
		err := mcpserver.CheckAddr(tt.addr, tt.remote)
		if (err == nil) != tt.ok {
			t.Errorf("%s (remote %v): %v", tt.addr, tt.remote, err)
		}
	}
	if err := mcpserver.CheckAddr(":8080", false); err.Error() != "--http :8080 is not a loopback address: serving the agent's tools to other machines needs --allow-remote" {
		t.Errorf("message: %v", err)
	}
}

// TestHTTPAndProgress serves the tools of the test MCP server (an MCP
// toolset inside ours) over streamable HTTP: progress goes on to the client.
func TestHTTPAndProgress(t *testing.T) {
	bin, err := testbin.Build("host/testdata/mcpserver", "mcpserver")
	if err != nil {
		t.Fatal(err)
	}
	l := mcpclient.LoadAll(context.Background(), []spec.MCPServer{{Name: "inner", Command: bin, Prefix: true, EnabledTools: []string{"slow", "echo"}}},
		mcpclient.Options{Decider: approval.Yolo{}})
	t.Cleanup(l.Close)
	ts := toolset.New(nil)
	for _, st := range l.Status {
		if err := ts.Add(st.Tool); err != nil {
			t.Fatal(err)
		}
	}
	srv := mcpserver.New(ts, mcpserver.NewApprovals(false), mcpserver.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	token, err := mcpserver.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	go func() { served <- srv.ServeHTTP(ctx, ln, token) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()

	var mu sync.Mutex
	var progress []float64
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		}})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + mcpserver.Path,
		HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := callTool(t, cs, "inner__echo", map[string]any{"text": "over http"}); res.IsError || texts(res) != "over http" {
		t.Fatalf("echo: %+v", res)
	}
	params := &mcp.CallToolParams{Name: "inner__slow", Arguments: map[string]any{"steps": 3, "interval_ms": 200}}
	params.SetProgressToken("p1")
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	res, err := cs.CallTool(cctx, params)
	if err != nil || res.IsError || texts(res) != "done after 3 steps" {
		t.Fatalf("slow: %v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) < 3 || progress[0] != 0 || progress[2] != 2 {
		t.Fatalf("progress %v", progress)
	}
}

// bearer sends its token with every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPToken: a request without the bearer token, or with another, is
// refused before the MCP handler sees it; the Host and Origin checks stay.
func TestHTTPToken(t *testing.T) {
	const token = "0123456789abcdef-token"
	srv := httptest.NewServer(mcpserver.New(tools(t, nil), nil, mcpserver.Options{}).Handler(token))
	t.Cleanup(srv.Close)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	tests := []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer 0123456789abcdef-other"}, http.StatusUnauthorized},
		{"token prefix", map[string]string{"Authorization": "Bearer 0123456789abcdef"}, http.StatusUnauthorized},
		{"not bearer", map[string]string{"Authorization": "Basic " + token}, http.StatusUnauthorized},
		{"token", map[string]string{"Authorization": "Bearer " + token}, http.StatusOK},
		{"token, foreign Host", map[string]string{"Authorization": "Bearer " + token, "Host": "evil.example"}, http.StatusForbidden},
		{"token, cross-origin", map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tt.headers {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.status == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") != `Bearer realm="kosong-host"` {
				t.Fatalf("WWW-Authenticate %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
	if h := mcpserver.New(tools(t, nil), nil, mcpserver.Options{}).Handler(""); h != nil {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(initialize))
		req.Header.Set("Authorization", "Bearer ")
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("empty token: status %d", rec.Code)
		}
	}
}

func TestCheckToken(t *testing.T) {
	tok, err := mcpserver.NewToken()
	if err != nil || len(tok) != 43 || mcpserver.CheckToken(tok) != nil {
		t.Fatalf("NewToken = %q, %v", tok, err)
	}
	if other, _ := mcpserver.NewToken(); other == tok {
		t.Fatal("two tokens are equal")
	}
	tests := []struct{ token, err string }{
		{"short", "the bearer token is 5 characters long, shorter than 16"},
		{"0123456789abcdef ghi", "the bearer token contains white space"},
		{"0123456789abcdef", ""},
	}
	for _, tt := range tests {
		err := mcpserver.CheckToken(tt.token)
		if fmt.Sprint(err) != tt.err && !(err == nil && tt.err == "") {
			t.Errorf("%q: %v, want %q", tt.token, err, tt.err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := mcpserver.New(tools(t, nil), nil, mcpserver.Options{}).ServeHTTP(context.Background(), ln, ""); err == nil ||
		err.Error() != "the bearer token is 0 characters long, shorter than 16" {
		t.Fatalf("ServeHTTP without a token: %v", err)
	}
}
