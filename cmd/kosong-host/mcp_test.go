package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/mcpserver"
	"github.com/kosong-host/kosong-host/host/testbin"
)

// mcpTestServer builds the in-repo MCP server of the tests.
func mcpTestServer(t *testing.T) string {
	t.Helper()
	p, err := testbin.Build("host/testdata/mcpserver", "mcpserver")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mcpAgent is an agent with two plugin tools and the test MCP server.
func mcpAgent(t *testing.T) string {
	return fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools: ["echo:Echo", "shell:Shell"]
  mcp_servers:
    test:
      command: %q
      enabled_tools: [echo, add]
`, mcpTestServer(t))
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func hostCmd(t *testing.T, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(kosongHost(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KOSONG_PLUGIN_PATH=", "XDG_STATE_HOME="+t.TempDir())
	return cmd
}

// serveMCP runs `kosong-host mcp serve ARGS` in dir and connects a go-sdk
// client to it over stdio.
func serveMCP(t *testing.T, dir string, copts *mcp.ClientOptions, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := hostCmd(t, dir, append([]string{"--agent", "agent.yaml", "mcp", "serve"}, args...)...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, copts).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		if strings.Contains(stderr.String(), `unknown command "mcp"`) {
			t.Fatal("kosong-host has no mcp command: add newMCPCmd(g) to the root command (cmd/kosong-host/mcp.go)")
		}
		t.Fatalf("connect: %v; stderr: %s", err, stderr)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil && !strings.Contains(err.Error(), "signal") {
			t.Errorf("close: %v; stderr: %s", err, stderr)
		}
	})
	return cs
}

func callMCP(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

const rejectedText = "The tool call is rejected by the user. Stop what you are doing and wait for the user to tell you how to proceed."

func TestMCPServeRoundTrip(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": mcpAgent(t), "s.md": "hi",
		"extra.json": fmt.Sprintf(`{"mcpServers": {"extra": {"command": %q, "enabled_tools": ["echo"], "prefix": true}}}`, mcpTestServer(t))})
	cs := serveMCP(t, dir, nil, "--yolo", "--mcp-config-file", "extra.json")

	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	schemas := map[string]string{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		b, _ := json.Marshal(tl.InputSchema)
		schemas[tl.Name] = string(b)
	}
	slices.Sort(names)
	if fmt.Sprint(names) != "[Echo Shell extra__echo test__add test__echo]" {
		t.Fatalf("tools %v", names)
	}
	if !strings.Contains(schemas["Echo"], `"required":["text"]`) || !strings.Contains(schemas["Shell"], `"command"`) {
		t.Fatalf("schemas %v", schemas)
	}

	tests := []struct {
		tool    string
		args    any
		want    string
		isError bool
	}{
		{"Echo", map[string]any{"text": "hi"}, "hi", false},
		{"Shell", map[string]any{"command": "echo from-shell"}, "from-shell", false},
		{"test__add", map[string]any{"a": 1, "b": 2}, "3", false},
		{"extra__echo", map[string]any{"text": "nested"}, "nested", false},
		{"Echo", map[string]any{"text": 5}, `Error validating JSON arguments: parameter "text": type: 5 has type "integer", want "string"`, true},
		{"Shell", map[string]any{"command": "exit 3"}, "exit code 3", true},
	}
	for _, tt := range tests {
		got, isError := callMCP(t, cs, tt.tool, tt.args)
		if isError != tt.isError || !strings.Contains(got, tt.want) {
			t.Errorf("%s %v: isError %v %q, want %v %q", tt.tool, tt.args, isError, got, tt.isError, tt.want)
		}
	}
}

func TestMCPServeApprovals(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": strings.Replace(echoAgent, `["echo:Echo"]`, `["echo:Echo", "shell:Shell"]`, 1), "s.md": "hi"})
	shell := map[string]any{"command": "echo approved"}

	// A client without elicitation: not run, and told why.
	cs := serveMCP(t, dir, nil)
	if got, isError := callMCP(t, cs, "Shell", shell); !isError || got != mcpserver.NoElicitationMessage ||
		!strings.Contains(got, "--yolo") || !strings.Contains(got, "elicitation") {
		t.Fatalf("no elicitation: %v %q", isError, got)
	}
	// A client with elicitation is asked.
	var asked []string
	var mu sync.Mutex
	answer := map[string]any{"decision": "approve"}
	cs = serveMCP(t, dir, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: answer}, nil
	}})
	if got, isError := callMCP(t, cs, "Shell", shell); isError || !strings.Contains(got, "approved") {
		t.Fatalf("approved: %v %q", isError, got)
	}
	answer = map[string]any{"decision": "reject", "feedback": "not now"}
	if got, isError := callMCP(t, cs, "Shell", shell); !isError || got != "The tool call is rejected by the user. User feedback: not now" {
		t.Fatalf("rejected: %v %q", isError, got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.HasPrefix(asked[0], "Shell wants approval to run command. (plugin shell)\nplugin shell says:\nRun command `echo approved`") {
		t.Fatalf("asked %q", asked)
	}
}

// serveMCPHTTP starts `kosong-host mcp serve --http 127.0.0.1:0 ARGS` in dir
// with the extra environment and returns the endpoint and the header line
// it printed; the server is stopped with SIGTERM at cleanup.
func serveMCPHTTP(t *testing.T, dir string, env []string, args ...string) (endpoint, header string) {
	t.Helper()
	cmd := hostCmd(t, dir, append([]string{"--trust", "mcp", "serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("mcp serve --http exited with %v after SIGTERM", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("mcp serve --http did not stop on SIGTERM")
		}
	})
	r := bufio.NewReader(stderr)
	line, err := r.ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		exited <- cmd.Wait()
		t.Fatalf("read the URL: %v (%q)", err, line)
	}
	header, err = r.ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		exited <- cmd.Wait()
		t.Fatalf("read the token line: %v (%q)", err, header)
	}
	go func() { _, _ = r.WriteTo(new(bytes.Buffer)); exited <- cmd.Wait() }()
	i := strings.Index(line, "http://")
	if i < 0 || !strings.Contains(line, `agent "t"`) {
		t.Fatalf("stderr: %q", line)
	}
	return strings.TrimSpace(line[i:]), strings.TrimSpace(header)
}

// bearerTransport sends its token with every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// postStatus posts an MCP initialize request with the Authorization header
// (none if empty) and returns the HTTP status.
func postStatus(t *testing.T, endpoint, authorization string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestMCPServeHTTP: the server prints a generated bearer token and refuses
// requests without it or with another (401); a client with it calls tools.
func TestMCPServeHTTP(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi"})
	url, header := serveMCPHTTP(t, dir, nil)
	token, ok := strings.CutPrefix(header, "kosong-host: clients must send the header: Authorization: Bearer ")
	if !ok || len(token) != 43 {
		t.Fatalf("token line %q", header)
	}
	for _, auth := range []string{"", "Bearer " + strings.Repeat("x", 43), "Bearer " + token[:42], "Basic " + token} {
		if got := postStatus(t, url, auth); got != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, got)
		}
	}
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil); err == nil {
		t.Fatal("a client without the token connected")
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, isError := callMCP(t, cs, "Echo", map[string]any{"text": "over http"}); isError || got != "over http" {
		t.Fatalf("Echo: %v %q", isError, got)
	}
}

// TestMCPServeHTTPTokenEnv: --token-env names the variable holding the
// token, which is then not printed.
func TestMCPServeHTTPTokenEnv(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi"})
	const token = "a-token-chosen-by-the-user"
	url, header := serveMCPHTTP(t, dir, []string{"KOSONG_TEST_MCP_TOKEN=" + token}, "--token-env", "KOSONG_TEST_MCP_TOKEN")
	if header != "kosong-host: clients must send the header: Authorization: Bearer $KOSONG_TEST_MCP_TOKEN" {
		t.Fatalf("token line %q", header)
	}
	if got := postStatus(t, url, ""); got != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", got)
	}
	if got := postStatus(t, url, "Bearer a-token-chosen-by-the-usex"); got != http.StatusUnauthorized {
		t.Errorf("wrong token: status %d, want 401", got)
	}
	if got := postStatus(t, url, "Bearer "+token); got != http.StatusOK {
		t.Errorf("token: status %d, want 200", got)
	}
}

func TestMCPServeErrors(t *testing.T) {
	server := mcpTestServer(t)
	t.Setenv("KOSONG_TEST_SHORT_TOKEN", "short")
	tests := []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"remote address", nil, []string{"--http", "0.0.0.0:0"}, "--http 0.0.0.0:0 is not a loopback address: serving the agent's tools to other machines needs --allow-remote"},
		{"token variable not set", nil, []string{"--http", "127.0.0.1:0", "--token-env", "KOSONG_TEST_NO_SUCH_TOKEN"}, "--token-env KOSONG_TEST_NO_SUCH_TOKEN: the variable is not set or empty"},
		{"token too short", nil, []string{"--http", "127.0.0.1:0", "--token-env", "KOSONG_TEST_SHORT_TOKEN"}, "--token-env KOSONG_TEST_SHORT_TOKEN: the bearer token is 5 characters long, shorter than 16"},
		{"token over stdio", nil, []string{"--token-env", "KOSONG_TEST_SHORT_TOKEN"}, "--token-env is for --http: over stdio there is no token"},
		{"session timeout over stdio", nil, []string{"--session-timeout", "1m"}, "--session-timeout is for --http: over stdio there is one session"},
		{"max sessions over stdio", nil, []string{"--max-sessions", "5"}, "--max-sessions is for --http: over stdio there is one session"},
		{"negative session timeout", nil, []string{"--http", "127.0.0.1:0", "--session-timeout", "-1s"}, "invalid --session-timeout -1s: use a positive duration, or 0 to keep idle sessions"},
		{"no sessions", nil, []string{"--http", "127.0.0.1:0", "--max-sessions", "0"}, "invalid --max-sessions 0: at least 1"},
		{"session timeout not a duration", nil, []string{"--http", "127.0.0.1:0", "--session-timeout", "soon"}, `invalid argument "soon" for "--session-timeout" flag`},
		{"bad config file", map[string]string{"bad.json": `{"mcpServers": [`}, []string{"--mcp-config-file", "bad.json"}, "Invalid JSON in MCP config file: "},
		{"server defined twice", map[string]string{"dup.json": `{"mcpServers": {"test": {"command": "x"}}}`}, []string{"--mcp-config-file", "dup.json"}, `MCP server "test" is also defined at `},
		{"tool name clash", map[string]string{"clash.json": fmt.Sprintf(`{"mcpServers": {"other": {"command": %q, "prefix": false, "enabled_tools": ["echo"]}, "more": {"command": %q, "prefix": false, "enabled_tools": ["echo"]}}}`, server, server)},
			[]string{"--mcp-config-file", "clash.json"}, "Invalid tools: [echo (duplicate tool name echo: provided by mcp server other (" + server + ") and by mcp server more (" + server + "))]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agent.yaml": mcpAgent(t), "s.md": "hi"}
			for k, v := range tt.files {
				files[k] = v
			}
			dir := writeFiles(t, files)
			r := runHost(t, dir, "", append([]string{"mcp", "serve"}, tt.args...)...)
			if r.code != 2 || !strings.HasPrefix(r.stderr, "error: ") || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d stderr %q, want exit 2 and %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

// TestToolsListMCP: every row has its source; an MCP server that cannot
// start is a failed row and does not fail the load.
func TestToolsListMCP(t *testing.T) {
	agentYAML := mcpAgent(t) + "    broken:\n      command: kosong-no-such-mcp-server\n"
	dir := writeFiles(t, map[string]string{"agent.yaml": agentYAML, "s.md": "hi"})
	r := runHost(t, dir, "", "tools", "list", "--json")
	if r.code != 0 {
		t.Fatalf("tools list: exit %d: %s", r.code, r.stderr)
	}
	var rows []struct {
		Name, Status, Reason, Source string
		MCPServer                    string `json:"mcp_server"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	got := map[string]string{}
	for _, row := range rows {
		got[row.Name] = fmt.Sprintf("%s|%s|%s|%s", row.Status, row.Reason, row.Source, row.MCPServer)
	}
	server := mcpTestServer(t)
	want := map[string]string{
		"test__echo": "loaded||mcp server test (" + server + ")|test",
		"test__add":  "loaded||mcp server test (" + server + ")|test",
		"mcp:broken": "failed|MCP server broken: start kosong-no-such-mcp-server: executable file not found in $PATH|mcp server broken (kosong-no-such-mcp-server)|broken",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
	if got["Echo"] != "loaded||builtin echo|" || got["Shell"] != "loaded||builtin shell|" {
		t.Errorf("plugin rows: %v", got)
	}
	r = runHost(t, dir, "", "tools", "call", "test__echo", `{"text":"via tools call"}`, "--yolo")
	if r.code != 0 || r.stdout != "via tools call\n" {
		t.Fatalf("tools call: %+v", r)
	}
	r = runHost(t, dir, "", "tools", "call", "test__echo", `{"text":"x"}`)
	if r.code != 1 || !strings.Contains(r.stderr, rejectedText) {
		t.Fatalf("tools call without --yolo: %+v", r)
	}
}

// TestRunWithMCPAndPluginTools: one turn whose step calls an MCP tool and a
// plugin tool in parallel.
func TestRunWithMCPAndPluginTools(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": mcpAgent(t), "s.md": "hi", "script.yaml": `
turns:
  - tool_calls:
      - {id: m1, name: test__add, arguments: {a: 2, b: 40}}
      - {id: p1, name: Echo, arguments: {text: from the plugin}}
  - text: "The MCP server says 42."
`})
	r := runHost(t, dir, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo",
		"--output-format", "stream-json", "-p", "add and echo")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	results := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct{ Type, ID, Status, Output string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if ev.Type == "tool_result" {
			results[ev.ID] = ev.Status + ":" + strings.TrimSpace(ev.Output)
		}
	}
	if results["m1"] != "ok:42" || results["p1"] != "ok:from the plugin" {
		t.Fatalf("results %v", results)
	}
}

// TestRunShowsMCPProgress: progress notifications of an MCP tool reach the
// front end as tool_progress events.
func TestRunShowsMCPProgress(t *testing.T) {
	agentYAML := strings.Replace(mcpAgent(t), "enabled_tools: [echo, add]", "enabled_tools: [slow]", 1)
	dir := writeFiles(t, map[string]string{"agent.yaml": agentYAML, "s.md": "hi", "script.yaml": `
turns:
  - tool_calls: [{id: s1, name: test__slow, arguments: {steps: 3, interval_ms: 1}}]
  - text: "Done."
`})
	r := runHost(t, dir, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo",
		"--output-format", "stream-json", "-p", "go slowly")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var progress []float64
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct {
			Type, ID, Name string
			Progress       float64
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if ev.Type == "tool_progress" {
			if ev.ID != "s1" || ev.Name != "test__slow" {
				t.Fatalf("progress event %+v", ev)
			}
			progress = append(progress, ev.Progress)
		}
	}
	if len(progress) < 2 {
		t.Fatalf("progress events %v\n%s", progress, r.stdout)
	}
}

// TestMCPServeHTTPMaxSessions: with --max-sessions 1 a second session
// closes the first, whose next request gets 404.
func TestMCPServeHTTPMaxSessions(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi"})
	const token = "a-token-chosen-by-the-user"
	url, _ := serveMCPHTTP(t, dir, []string{"KOSONG_TEST_MCP_TOKEN=" + token}, "--token-env", "KOSONG_TEST_MCP_TOKEN",
		"--max-sessions", "1", "--session-timeout", "1h")
	send := func(session, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	c1, first := send("", initialize)
	c2, second := send("", initialize)
	if first == "" || second == "" {
		t.Fatalf("sessions %q (%d) and %q (%d)", first, c1, second, c2)
	}
	if code, _ := send(first, ping); code != http.StatusNotFound {
		t.Errorf("the first session answered %d, want 404", code)
	}
	if code, _ := send(second, ping); code != http.StatusOK {
		t.Errorf("the second session answered %d, want 200", code)
	}
}
