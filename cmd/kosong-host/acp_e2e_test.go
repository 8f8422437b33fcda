package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// acpClient is an editor: the ACP SDK's client side, driving `kosong-host
// acp` through its stdio.
type acpClient struct {
	t    *testing.T
	cmd  *exec.Cmd
	conn *acp.ClientSideConnection
	in   io.WriteCloser
	out  io.ReadCloser

	mu      sync.Mutex
	updates []acp.SessionUpdate
	changed chan struct{}
	// permit answers a permission request; nil rejects.
	permit func(acp.RequestPermissionRequest) acp.RequestPermissionResponse
	asked  []string
	// files, when set, are the editor's buffers by path: fs/* read and
	// write them; nil answers fs/* with method not found.
	files map[string]string
	// terminals, when set, serve terminal/*: a command runs to its end in
	// terminal/create, and its output is kept by terminal id; nil answers
	// terminal/* with method not found.
	terminals map[string]fakeTerminal
	// log is the order of permission requests, fs/* and terminal/* calls.
	log []string
}

type fakeTerminal struct {
	output string
	code   int
}

func startACP(t *testing.T, dir string, env []string, args ...string) *acpClient {
	t.Helper()
	cmd := exec.Command(kosongHost(t), append([]string{"acp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = hostEnv()
	cmd.Env = append(cmd.Env, env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &acpClient{t: t, cmd: cmd, in: in, out: out, changed: make(chan struct{}, 1)}
	c.conn = acp.NewClientSideConnection(c, in, out)
	t.Cleanup(func() { c.stop() })
	return c
}

// stop closes the agent's stdin and waits for it to exit.
func (c *acpClient) stop() time.Duration {
	start := time.Now()
	c.in.Close()
	if !exitsWithin(c.cmd, 30*time.Second) {
		c.t.Errorf("kosong-host acp did not exit after its stdin closed")
	}
	return time.Since(start)
}

func (c *acpClient) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	c.t.Cleanup(cancel)
	return ctx
}

func (c *acpClient) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, string(p.ToolCall.ToolCallId))
	c.log = append(c.log, "permission "+string(p.ToolCall.ToolCallId))
	permit := c.permit
	c.mu.Unlock()
	if permit == nil {
		return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected("reject")}, nil
	}
	return permit(p), nil
}

func (c *acpClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

func (c *acpClient) ReadTextFile(_ context.Context, r acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil {
		return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
	}
	c.log = append(c.log, "read "+r.Path)
	content, ok := c.files[r.Path]
	if !ok {
		return acp.ReadTextFileResponse{}, acp.NewInvalidParams(map[string]any{"error": "no such file " + r.Path})
	}
	return acp.ReadTextFileResponse{Content: content}, nil
}
func (c *acpClient) WriteTextFile(_ context.Context, r acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil {
		return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
	}
	c.log = append(c.log, "write "+r.Path)
	c.files[r.Path] = r.Content
	return acp.WriteTextFileResponse{}, nil
}
func (c *acpClient) CreateTerminal(_ context.Context, r acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	c.mu.Lock()
	serve := c.terminals != nil
	c.mu.Unlock()
	if !serve {
		return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
	}
	cmd := exec.Command(r.Command, r.Args...)
	if r.Cwd != nil {
		cmd.Dir = *r.Cwd
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id := fmt.Sprintf("term-%d", len(c.terminals)+1)
	c.terminals[id] = fakeTerminal{output: string(out), code: code}
	c.log = append(c.log, "terminal/create "+strings.Join(r.Args[1:], " "))
	return acp.CreateTerminalResponse{TerminalId: id}, nil
}
func (c *acpClient) terminal(id string) (fakeTerminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.terminals[id]
	if !ok {
		return t, acp.NewInvalidParams(map[string]any{"error": "no terminal " + id})
	}
	return t, nil
}
func (c *acpClient) KillTerminal(_ context.Context, r acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	_, err := c.terminal(r.TerminalId)
	return acp.KillTerminalResponse{}, err
}
func (c *acpClient) TerminalOutput(_ context.Context, r acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	t, err := c.terminal(r.TerminalId)
	return acp.TerminalOutputResponse{Output: t.output, ExitStatus: &acp.TerminalExitStatus{ExitCode: acp.Ptr(t.code)}}, err
}
func (c *acpClient) ReleaseTerminal(_ context.Context, r acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	_, err := c.terminal(r.TerminalId)
	c.mu.Lock()
	c.log = append(c.log, "terminal/release")
	c.mu.Unlock()
	return acp.ReleaseTerminalResponse{}, err
}
func (c *acpClient) WaitForTerminalExit(_ context.Context, r acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	t, err := c.terminal(r.TerminalId)
	return acp.WaitForTerminalExitResponse{ExitCode: acp.Ptr(t.code)}, err
}

// waitUpdate waits until an update matches.
func (c *acpClient) waitUpdate(what string, match func(acp.SessionUpdate) bool) {
	c.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		c.mu.Lock()
		for _, u := range c.updates {
			if match(u) {
				c.mu.Unlock()
				return
			}
		}
		c.mu.Unlock()
		select {
		case <-c.changed:
		case <-timeout:
			c.t.Fatalf("no update %s in 60s", what)
		}
	}
}

func (c *acpClient) takeUpdates() []acp.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates
	c.updates = nil
	return u
}

func (c *acpClient) initialize() acp.InitializeResponse {
	c.t.Helper()
	return c.initializeWith(acp.ClientCapabilities{})
}

func (c *acpClient) initializeWith(caps acp.ClientCapabilities) acp.InitializeResponse {
	c.t.Helper()
	res, err := c.conn.Initialize(c.ctx(), acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo: &acp.Implementation{Name: "test-editor", Version: "1"}, ClientCapabilities: caps})
	if err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	return res
}

func (c *acpClient) newSession(dir string) acp.NewSessionResponse {
	c.t.Helper()
	res, err := c.conn.NewSession(c.ctx(), acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{}})
	if err != nil {
		c.t.Fatalf("session/new: %v", err)
	}
	return res
}

func (c *acpClient) prompt(id acp.SessionId, text string) (acp.PromptResponse, error) {
	return c.conn.Prompt(c.ctx(), acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
}

func selected(id string) acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(acp.PermissionOptionId(id))}
}

// summary is one line per update, for assertions.
// Consecutive chunks of one kind are joined.
func summary(ups []acp.SessionUpdate) []string {
	var out []string
	chunk := func(kind, text string) {
		if n := len(out); n > 0 && strings.HasPrefix(out[n-1], kind+" ") {
			out[n-1] += text
			return
		}
		out = append(out, kind+" "+text)
	}
	for _, u := range ups {
		switch {
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			chunk("message", u.AgentMessageChunk.Content.Text.Text)
		case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil:
			chunk("thought", u.AgentThoughtChunk.Content.Text.Text)
		case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			chunk("user", u.UserMessageChunk.Content.Text.Text)
		case u.ToolCall != nil:
			out = append(out, fmt.Sprintf("tool_call %s %s %s", u.ToolCall.ToolCallId, u.ToolCall.Kind, u.ToolCall.Title))
		case u.ToolCallUpdate != nil:
			s := fmt.Sprintf("tool_call_update %s", u.ToolCallUpdate.ToolCallId)
			if u.ToolCallUpdate.Status != nil {
				s += " " + string(*u.ToolCallUpdate.Status)
			}
			for _, c := range u.ToolCallUpdate.Content {
				switch {
				case c.Diff != nil:
					s += fmt.Sprintf(" diff(%s:%q)", filepath.Base(c.Diff.Path), c.Diff.NewText)
				case c.Content != nil && c.Content.Content.Text != nil:
					s += fmt.Sprintf(" text(%q)", c.Content.Content.Text.Text)
				}
			}
			out = append(out, s)
		case u.Plan != nil:
			var e []string
			for _, p := range u.Plan.Entries {
				e = append(e, p.Content+"="+string(p.Status))
			}
			out = append(out, "plan "+strings.Join(e, ","))
		case u.CurrentModeUpdate != nil:
			out = append(out, "mode "+string(u.CurrentModeUpdate.CurrentModeId))
		}
	}
	return out
}

func hasLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// TestACP: in an empty folder with the built-in default agent, a turn with
// parallel tool calls, permission requests answered each way (once, for
// the session, rejected with feedback), diffs, a plan; then session/load
// on a new connection replays the session and goes on.
func TestACP(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - reasoning: "Plan the edits."
    text: "Working."
    tool_calls:
      - {id: w1, name: WriteFile, arguments: {path: a.txt, content: "alpha\n"}}
      - {id: s1, name: Shell, arguments: {command: "echo one > one.txt"}}
      - {id: t1, name: SetTodoList, arguments: {todos: [{title: "write a", status: done}, {title: "check", status: in_progress}]}}
      - {id: w2, name: WriteFile, arguments: {path: c.txt, content: "no"}}
  - tool_calls:
      - {id: s2, name: Shell, arguments: {command: "echo two > two.txt"}}
  - text: "Done."
  - text: "Resumed fine."
`)
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script)
	init := c.initialize()
	if !init.AgentCapabilities.LoadSession || init.AgentInfo == nil || init.AgentInfo.Name != "kosong-host" || init.ProtocolVersion != acp.ProtocolVersionNumber {
		t.Fatalf("initialize: %+v", init)
	}
	sess := c.newSession(dir)
	if sess.Modes == nil || sess.Modes.CurrentModeId != "ask" || len(sess.Modes.AvailableModes) != 3 {
		t.Fatalf("modes %+v", sess.Modes)
	}
	c.permit = func(p acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		switch p.ToolCall.ToolCallId {
		case "w1":
			return selected("approve")
		case "s1":
			return selected("approve_for_session")
		case "w2":
			r := selected("reject")
			r.Meta = map[string]any{"feedback": "not c"}
			return r
		}
		t.Errorf("unexpected permission request for %s", p.ToolCall.ToolCallId)
		return selected("reject")
	}
	res, err := c.prompt(sess.SessionId, "Make the files.")
	if err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	lines := summary(c.takeUpdates())
	for _, want := range []string{
		"thought Plan the edits.",
		"message Working.",
		"tool_call s1 execute Shell: echo one > one.txt",
		"tool_call w1 edit WriteFile: a.txt",
		`tool_call_update w1 completed diff(a.txt:"alpha\n")`,
		"tool_call_update s1 completed",
		"tool_call_update w2 failed",
		"plan write a=completed,check=in_progress",
		"tool_call_update s2 completed",
		"message Done.",
	} {
		if !hasLine(lines, want) {
			t.Errorf("updates lack %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	c.mu.Lock()
	asked := strings.Join(c.asked, ",")
	c.mu.Unlock()
	if strings.Contains(asked, "s2") || len(c.asked) != 3 {
		t.Errorf("permission asked for %s; want w1, s1, w2 (s2 approved for the session)", asked)
	}
	for name, want := range map[string]string{"a.txt": "alpha\n", "one.txt": "one\n", "two.txt": "two\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); err == nil {
		t.Errorf("c.txt written after a rejection")
	}
	c.stop()

	// A new connection loads the session by id: the history comes back as
	// updates, then the session goes on.
	writeScript(t, script, "turns:\n  - text: \"Resumed fine.\"\n")
	c2 := startACP(t, dir, env, "--provider", "scripted", "--script", script)
	c2.initialize()
	if _, err := c2.conn.LoadSession(c2.ctx(), acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: dir, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	lines = summary(c2.takeUpdates())
	for _, want := range []string{"user Make the files.", "message Working.", "tool_call s1 execute Shell: echo one > one.txt",
		"tool_call_update s1 completed", "tool_call_update w2 failed", "message Done."} {
		if !hasLine(lines, want) {
			t.Errorf("replay lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	res, err = c2.prompt(sess.SessionId, "And now?")
	if err != nil || res.StopReason != acp.StopReasonEndTurn || !hasLine(summary(c2.takeUpdates()), "message Resumed fine.") {
		t.Fatalf("prompt after load: %+v, %v", res, err)
	}
}

// TestACPCancelAndModes: the yolo mode approves without asking; a cancel
// ends the turn and its tool call quickly, with stopReason cancelled.
func TestACPCancelAndModes(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, "turns:\n  - tool_calls: [{id: z1, name: Shell, arguments: {command: \"sleep 60\"}}]\n  - text: never\n")
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script)
	c.initialize()
	sess := c.newSession(dir)
	if _, err := c.conn.SetSessionMode(c.ctx(), acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "yolo"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.conn.SetSessionMode(c.ctx(), acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "reckless"}); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
	type outcome struct {
		res acp.PromptResponse
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := c.prompt(sess.SessionId, "Wait.")
		done <- outcome{res, err, time.Now()}
	}()
	c.waitUpdate("tool_call z1 running", func(u acp.SessionUpdate) bool { return u.ToolCall != nil && u.ToolCall.ToolCallId == "z1" })
	// The Shell call is running (yolo: no permission asked).
	start := time.Now()
	if err := c.conn.Cancel(c.ctx(), acp.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || o.res.StopReason != acp.StopReasonCancelled {
		t.Fatalf("prompt: %+v, %v", o.res, o.err)
	}
	took := o.at.Sub(start)
	t.Logf("cancel to stopReason cancelled: %s", took)
	if took > 3*time.Second {
		t.Errorf("the cancel took %s", took)
	}
	if len(c.asked) != 0 {
		t.Errorf("yolo mode asked permission for %v", c.asked)
	}
	if !hasLine(summary(c.takeUpdates()), "mode yolo") {
		t.Errorf("no current_mode_update")
	}
}

// TestACPBadInput: a prompt before session/new, an unknown session id, a
// cancel with nothing running, malformed JSON, a client that disconnects
// mid-turn (the tool call is cancelled, the session saved).
func TestACPBadInput(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, "turns:\n  - tool_calls: [{id: z1, name: Shell, arguments: {command: \"sleep 60\"}}]\n  - text: never\n")
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script, "--yolo")
	c.initialize()
	if _, err := c.prompt("nope", "hi"); err == nil || !strings.Contains(err.Error(), "unknown session") {
		t.Fatalf("prompt before session/new: %v", err)
	}
	if _, err := c.conn.LoadSession(c.ctx(), acp.LoadSessionRequest{SessionId: "20990101-000000-abcdef", Cwd: dir, McpServers: []acp.McpServer{}}); err == nil ||
		!strings.Contains(err.Error(), "unknown session 20990101-000000-abcdef") {
		t.Fatalf("load of an unknown id: %v", err)
	}
	if _, err := c.conn.NewSession(c.ctx(), acp.NewSessionRequest{Cwd: "relative", McpServers: []acp.McpServer{}}); err == nil {
		t.Fatal("a relative cwd was accepted")
	}
	sess := c.newSession(dir)
	// Nothing runs: the cancel is a no-op, and the session still works.
	if err := c.conn.Cancel(c.ctx(), acp.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	go c.prompt(sess.SessionId, "Wait for me.")
	c.waitUpdate("tool_call z1", func(u acp.SessionUpdate) bool { return u.ToolCall != nil && u.ToolCall.ToolCallId == "z1" })
	// The editor goes away mid-turn.
	c.out.Close()
	took := c.stop()
	t.Logf("exit after the client disconnected mid-turn: %s", took)
	if took > 10*time.Second {
		t.Errorf("kosong-host acp took %s to exit", took)
	}
	home := strings.TrimPrefix(env[0], "HOME=")
	hist, err := os.ReadFile(filepath.Join(home, "state", "kosong-host", "sessions", string(sess.SessionId), "history.jsonl"))
	if err != nil || !strings.Contains(string(hist), "Wait for me.") {
		t.Fatalf("the session was not saved: %q %v", hist, err)
	}

	// Malformed JSON gets a parse error, and the connection goes on.
	raw := exec.Command(kosongHost(t), "acp", "--provider", "scripted", "--script", script)
	raw.Dir, raw.Env = dir, append(os.Environ(), env...)
	in, _ := raw.StdinPipe()
	out, _ := raw.StdoutPipe()
	if err := raw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); raw.Wait() })
	rd := bufio.NewReader(out)
	io.WriteString(in, "{this is not json\n")
	line, err := rd.ReadString('\n')
	var m struct {
		Error *struct{ Code int } `json:"error"`
	}
	if err != nil || json.Unmarshal([]byte(line), &m) != nil || m.Error == nil || m.Error.Code != -32700 {
		t.Fatalf("malformed JSON: %q %v", line, err)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	if line, err := rd.ReadString('\n'); err != nil || !strings.Contains(line, `"loadSession":true`) {
		t.Fatalf("initialize after the bad line: %q %v", line, err)
	}
}

// TestACPClientMCPServer: an MCP server the editor hands over in
// session/new is a tool source of that session; its calls ask permission
// (mcp:TOOL) like any other.
func TestACPClientMCPServer(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls: [{id: m1, name: editor__echo, arguments: {text: "from the editor's server"}}]
  - text: "ok"
`)
	c := startACP(t, dir, env, "--provider", "scripted", "--script", script, "--yolo")
	c.initialize()
	sess, err := c.conn.NewSession(c.ctx(), acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{
		{Stdio: &acp.McpServerStdio{Name: "editor", Command: mcpTestServer(t), Args: []string{}, Env: []acp.EnvVariable{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.prompt(sess.SessionId, "Use the editor's tool."); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	lines := summary(c.takeUpdates())
	if !hasLine(lines, `tool_call_update m1 completed text("from the editor's server")`) {
		t.Fatalf("updates:\n%s", strings.Join(lines, "\n"))
	}
}
