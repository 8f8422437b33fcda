package main_test

import (
	"bufio"
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
)

// wireClient is a small JSON-RPC client of `kosong-host run --wire`.
type wireClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	msgs   chan map[string]any
	stderr *strings.Builder
	mu     sync.Mutex
	seen   []map[string]any
	// early holds the responses next read past while waiting for another
	// message: a turn's response may arrive before the cancel's.
	early map[any]map[string]any
}

func startWire(t *testing.T, dir string, env []string, args ...string) *wireClient {
	t.Helper()
	cmd := exec.Command(kosongHost(t), append([]string{"run", "--wire"}, args...)...)
	cmd.Dir = dir
	cmd.Env = hostEnv()
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &wireClient{t: t, cmd: cmd, stdin: stdin, msgs: make(chan map[string]any, 1000), stderr: &strings.Builder{}}
	cmd.Stderr = &lockedWriter{w: c.stderr, mu: &c.mu}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			c.msgs <- m
		}
		close(c.msgs)
	}()
	t.Cleanup(func() {
		stdin.Close()
		if !exitsWithin(cmd, 30*time.Second) {
			t.Errorf("kosong-host --wire did not exit after stdin closed")
		}
	})
	return c
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (c *wireClient) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	c.sendRaw(string(b))
}

func (c *wireClient) sendRaw(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *wireClient) request(id, method string, params any) {
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func (c *wireClient) answer(id any, result any) {
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// next returns the next message for which match is true, failing after a
// generous wait; the messages skipped are kept in seen.
func (c *wireClient) next(what string, match func(m map[string]any) bool) map[string]any {
	c.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				c.mu.Lock()
				defer c.mu.Unlock()
				c.t.Fatalf("connection ended waiting for %s; stderr:\n%s", what, c.stderr)
			}
			c.seen = append(c.seen, m)
			if match(m) {
				return m
			}
			if m["id"] != nil && m["method"] == nil {
				if c.early == nil {
					c.early = map[any]map[string]any{}
				}
				c.early[m["id"]] = m
			}
		case <-timeout:
			c.t.Fatalf("no %s in 60s; seen %v", what, c.seen)
		}
	}
}

// exitsWithin waits for cmd to exit, up to d; it kills a process still
// running then and reports false.
func exitsWithin(cmd *exec.Cmd, d time.Duration) bool {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		cmd.Process.Kill()
		return false
	}
}

// untilResponse reads messages until the response to request id. Each
// request of the host (ApprovalRequest, ToolCallRequest...) goes to
// onRequest with its type and payload; the ToolResult events' return
// values are collected by tool call id.
func (c *wireClient) untilResponse(id string, onRequest func(m map[string]any, typ string, payload map[string]any)) (resp map[string]any, results map[string]map[string]any) {
	results = map[string]map[string]any{}
	for resp == nil {
		m := c.next("a message", func(map[string]any) bool { return true })
		p, _ := m["params"].(map[string]any)
		pl, _ := p["payload"].(map[string]any)
		typ, _ := p["type"].(string)
		switch {
		case m["id"] == id && m["method"] == nil:
			resp = m
		case typ == "ToolResult":
			results[pl["tool_call_id"].(string)] = pl["return_value"].(map[string]any)
		case m["method"] == "request":
			onRequest(m, typ, pl)
		}
	}
	return resp, results
}

func (c *wireClient) response(id string) map[string]any {
	c.t.Helper()
	if m, ok := c.early[id]; ok {
		delete(c.early, id)
		return m
	}
	return c.next("response "+id, func(m map[string]any) bool { return m["id"] == id && m["method"] == nil })
}

// requestOf waits for the server's request of type typ.
func (c *wireClient) requestOf(typ string) (id string, payload map[string]any) {
	c.t.Helper()
	m := c.next(typ, func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["method"] == "request" && p["type"] == typ
	})
	p := m["params"].(map[string]any)
	return m["id"].(string), p["payload"].(map[string]any)
}

func (c *wireClient) event(typ string, match func(p map[string]any) bool) map[string]any {
	c.t.Helper()
	m := c.next("event "+typ, func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		if m["method"] != "event" || p["type"] != typ {
			return false
		}
		pl, _ := p["payload"].(map[string]any)
		return match == nil || match(pl)
	})
	return m["params"].(map[string]any)["payload"].(map[string]any)
}

func (c *wireClient) stderrText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

var lookupTool = map[string]any{"name": "Lookup", "description": "Look a key up in the client.",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"key": map[string]any{"type": "string"}}, "required": []string{"key"}}}

func initWire(c *wireClient, tools ...any) map[string]any {
	c.t.Helper()
	c.request("init", "initialize", map[string]any{"protocol_version": "1.10", "client": map[string]any{"name": "test", "version": "1"},
		"external_tools": tools})
	return c.response("init")
}

// TestWire: one turn with parallel calls, an external tool called by the
// model and answered by the client, approvals answered each way.
func TestWire(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - text: "Looking."
    tool_calls:
      - {id: c1, name: Lookup, arguments: {key: "color"}}
      - {id: c2, name: Shell, arguments: {command: "echo shell-ran > shell.txt"}}
      - {id: c3, name: WriteFile, arguments: {path: "w.txt", content: "x"}}
  - text: "The color is blue."
`)
	c := startWire(t, dir, env, "--provider", "scripted", "--script", script)
	res := initWire(c, lookupTool,
		map[string]any{"name": "Shell", "description": "mine", "parameters": map[string]any{"type": "object"}},
		map[string]any{"name": "Broken", "parameters": map[string]any{"type": "nope"}})
	r := res["result"].(map[string]any)
	ext := r["external_tools"].(map[string]any)
	if fmt.Sprint(ext["accepted"]) != "[Lookup]" || r["protocol_version"] != "1.10" {
		t.Fatalf("initialize: %v", res)
	}
	rej := fmt.Sprint(ext["rejected"])
	if !strings.Contains(rej, "map[name:Shell reason:conflicts with builtin tool]") || !strings.Contains(rej, "name:Broken reason:invalid schema: ") ||
		!strings.Contains(rej, "nope does not equal any of") {
		t.Fatalf("rejected %s", rej)
	}

	c.request("p1", "prompt", map[string]any{"user_input": "What color?"})
	// Three approvals, one at a time: external:Lookup approved, the
	// command approved for the session, the file write rejected with
	// feedback.
	answers := map[string]map[string]any{
		"external:Lookup": {"response": "approve"},
		"run command":     {"response": "approve_for_session"},
		"edit file":       {"response": "reject", "feedback": "not that file"},
	}
	var toolCallID string
	resp, results := c.untilResponse("p1", func(m map[string]any, typ string, pl map[string]any) {
		switch typ {
		case "ApprovalRequest":
			a := answers[pl["action"].(string)]
			if a == nil {
				t.Fatalf("unexpected approval %v", pl)
			}
			a["request_id"] = pl["id"]
			c.answer(m["id"], a)
		case "ToolCallRequest":
			toolCallID = m["id"].(string)
			if pl["name"] != "Lookup" || pl["arguments"] != `{"key":"color"}` {
				t.Fatalf("tool call %v", pl)
			}
			// An answer to no request first: logged, ignored.
			c.answer("no-such-id", map[string]any{})
			c.answer(m["id"], map[string]any{"tool_call_id": m["id"], "return_value": map[string]any{"is_error": false, "output": "blue", "message": ""}})
		}
	})
	if toolCallID != "c1" || len(results) != 3 {
		t.Fatalf("tool call %q, results %v", toolCallID, results)
	}
	if results["c1"]["output"] != "blue" || results["c1"]["is_error"] != false {
		t.Errorf("Lookup result %v", results["c1"])
	}
	if results["c2"]["is_error"] != false {
		t.Errorf("Shell result %v", results["c2"])
	}
	if results["c3"]["is_error"] != true || !strings.Contains(fmt.Sprint(results["c3"]["message"]), "User feedback: not that file") {
		t.Errorf("WriteFile result %v", results["c3"])
	}
	if fmt.Sprint(resp["result"]) != "map[status:finished steps:2]" {
		t.Fatalf("prompt: %v", resp)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "shell.txt")); string(b) != "shell-ran\n" {
		t.Errorf("shell.txt %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "w.txt")); err == nil {
		t.Errorf("w.txt written after a rejection")
	}
	if !strings.Contains(c.stderrText(), "no-such-id") {
		t.Errorf("the unknown id is not logged:\n%s", c.stderrText())
	}
}

// TestWireBadInput: a bad protocol version, malformed JSON, an unknown
// method, a cancel with nothing running, a prompt without input.
func TestWireBadInput(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, "turns:\n  - text: hi\n")
	c := startWire(t, dir, env, "--provider", "scripted", "--script", script)
	c.request("v", "initialize", map[string]any{"protocol_version": "2.0"})
	if e := fmt.Sprint(c.response("v")["error"]); !strings.Contains(e, "-32602") || !strings.Contains(e, `Unsupported protocol version "2.0"`) {
		t.Fatalf("bad version: %s", e)
	}
	c.sendRaw(`{"jsonrpc":"2.0","id":"x",`)
	m := c.next("parse error", func(m map[string]any) bool { return m["id"] == nil && m["error"] != nil })
	if e := fmt.Sprint(m["error"]); !strings.Contains(e, "-32700") || !strings.Contains(e, "Invalid JSON format") {
		t.Fatalf("malformed: %v", m)
	}
	c.request("u", "frobnicate", nil)
	if e := fmt.Sprint(c.response("u")["error"]); !strings.Contains(e, "Unexpected method received: frobnicate") {
		t.Fatalf("unknown method: %s", e)
	}
	c.request("c", "cancel", nil)
	if e := fmt.Sprint(c.response("c")["error"]); !strings.Contains(e, "-32000") || !strings.Contains(e, "No agent turn is in progress") {
		t.Fatalf("cancel: %s", e)
	}
	c.request("p", "prompt", map[string]any{"user_input": 5})
	if e := fmt.Sprint(c.response("p")["error"]); !strings.Contains(e, "Invalid parameters for method `prompt`") {
		t.Fatalf("bad prompt: %s", e)
	}
	c.request("ok", "prompt", map[string]any{"user_input": "hello"})
	if r := fmt.Sprint(c.response("ok")["result"]); r != "map[status:finished steps:1]" {
		t.Fatalf("the server did not go on: %s", r)
	}
}

// TestWireToolTimeoutCancelResume: a client that never answers a tool call
// gets the call's timeout; a cancel ends a turn; -c resumes the session.
func TestWireToolTimeoutCancelResume(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls: [{id: t1, name: Lookup, arguments: {key: "a"}}]
  - text: "gave up"
  - tool_calls: [{id: t2, name: Shell, arguments: {command: "sleep 30"}}]
  - text: "never"
`)
	c := startWire(t, dir, env, "--provider", "scripted", "--script", script, "--yolo")
	slow := map[string]any{"name": "Lookup", "description": "slow", "parameters": lookupTool["parameters"], "timeout": 1}
	initWire(c, slow)
	c.request("p1", "prompt", map[string]any{"user_input": "first"})
	c.requestOf("ToolCallRequest") // never answered
	pl := c.event("ToolResult", nil)
	rv := pl["return_value"].(map[string]any)
	if rv["is_error"] != true || !strings.Contains(fmt.Sprint(rv["message"]), "Tool Lookup timed out after 1s") {
		t.Fatalf("timeout result %v", rv)
	}
	if r := fmt.Sprint(c.response("p1")["result"]); r != "map[status:finished steps:2]" {
		t.Fatalf("p1: %s", r)
	}
	c.request("p2", "prompt", map[string]any{"user_input": "second"})
	c.event("ToolCall", func(p map[string]any) bool { return p["id"] == "t2" })
	start := time.Now()
	c.request("c", "cancel", nil)
	if r := c.response("c"); r["error"] != nil {
		t.Fatalf("cancel: %v", r)
	}
	if r := fmt.Sprint(c.response("p2")["result"]); !strings.Contains(r, "status:cancelled") {
		t.Fatalf("p2: %s", r)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %s", d)
	}
	c.stdin.Close()
	c.cmd.Wait()

	// -c: the session of this folder, with both turns.
	writeScript(t, script, "turns:\n  - text: resumed\n")
	c2 := startWire(t, dir, env, "--provider", "scripted", "--script", script, "-c")
	initWire(c2)
	c2.request("p3", "prompt", map[string]any{"user_input": "third"})
	if r := fmt.Sprint(c2.response("p3")["result"]); r != "map[status:finished steps:1]" {
		t.Fatalf("p3: %s", r)
	}
	c2.stdin.Close()
	c2.cmd.Wait()
	r := runHostEnv(t, dir, env, "", "sessions", "--json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || rows[0]["first_prompt"] != "first" {
		t.Fatalf("sessions: %v %s", err, r.stdout)
	}
}
