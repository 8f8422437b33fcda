package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/host/serverclient"
)

// policyEnv is an empty machine whose admin policy (KOSONG_HOST_POLICY)
// holds body, and a script of one answer.
func policyEnv(t *testing.T, body string) (env []string, policyFile, script string) {
	t.Helper()
	policyFile = filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policyFile, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, "turns:\n  - text: done\n  - text: done again\n")
	return append(emptyEnv(t), "KOSONG_HOST_POLICY="+policyFile), policyFile, script
}

func yoloRefused(policyFile string) string {
	return "yolo (approving every action without asking) is refused by the admin policy " + policyFile + " (rule forced.yolo: forbidden)"
}

// TestPolicyForbidsYoloInRun: where the admin policy forbids yolo, run
// --yolo (one turn or interactive) is refused before anything starts, in
// one line naming the policy file and rule, and the terminal's /yolo
// says so and stays asking; without the rule, /yolo switches yolo on.
func TestPolicyForbidsYoloInRun(t *testing.T) {
	dir := t.TempDir()
	env, pol, script := policyEnv(t, "forced: {yolo: forbidden}\n")
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
	}{
		{"run -p --yolo", "", []string{"run", "--yolo", "-p", "hi"}},
		{"run -i --yolo", "hi\nexit\n", []string{"run", "--yolo", "-i"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runHostEnv(t, dir, env, tc.stdin, append(tc.args, "--provider", "scripted", "--script", script)...)
			if r.code != 2 || strings.TrimSpace(r.stderr) != "kosong-host: "+yoloRefused(pol) && !strings.HasSuffix(strings.TrimSpace(r.stderr), yoloRefused(pol)) {
				t.Fatalf("exit %d, want 2 and the refusal in one line\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || strings.Contains(r.stdout, "done") {
				t.Fatalf("not one line, or the turn ran\nstdout %s\nstderr %s", r.stdout, r.stderr)
			}
		})
	}
	t.Run("/yolo", func(t *testing.T) {
		r := runHostEnv(t, dir, env, "/yolo\n/exit\n", "run", "-i", "--provider", "scripted", "--script", script)
		if r.code != 0 || !strings.Contains(r.stdout+r.stderr, yoloRefused(pol)) || strings.Contains(r.stdout+r.stderr, "yolo on") {
			t.Fatalf("exit %d, want /yolo refused\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
		}
		allowed, _, _ := policyEnv(t, "forced: {yolo: allowed}\n")
		r = runHostEnv(t, dir, allowed, "/yolo\n/exit\n", "run", "-i", "--provider", "scripted", "--script", script)
		if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "yolo on") {
			t.Fatalf("exit %d, want yolo on where the policy allows it\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
		}
	})
}

// TestPolicyForbidsYoloInWire: run --wire --yolo is refused when the
// conversation opens, naming the policy file and rule.
func TestPolicyForbidsYoloInWire(t *testing.T) {
	dir := t.TempDir()
	env, pol, script := policyEnv(t, "forced: {yolo: forbidden}\n")
	c := startWire(t, dir, env, "--yolo", "--provider", "scripted", "--script", script)
	c.request("init", "initialize", map[string]any{"protocol_version": "1.10", "client": map[string]any{"name": "test", "version": "1"}})
	deadline := time.Now().Add(expectWithin)
	for !strings.Contains(c.stderrText(), yoloRefused(pol)) {
		if exitsWithin(c.cmd, time.Second) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(c.stderrText(), yoloRefused(pol)) {
		t.Fatalf("stderr lacks the refusal: %s", c.stderrText())
	}
}

// TestPolicyForbidsYoloInACP: acp --yolo cannot open a session; without
// it, a session offers no yolo mode and session/set_mode yolo is refused,
// naming the policy file and rule.
func TestPolicyForbidsYoloInACP(t *testing.T) {
	dir := t.TempDir()
	env, pol, script := policyEnv(t, "forced: {yolo: forbidden}\n")

	c := startACP(t, dir, env, "--yolo", "--provider", "scripted", "--script", script)
	c.initialize()
	_, err := c.conn.NewSession(c.ctx(), acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{}})
	if err == nil || !strings.Contains(errorText(err), yoloRefused(pol)) {
		t.Fatalf("acp --yolo: session/new: %v", errorText(err))
	}

	c = startACP(t, dir, env, "--provider", "scripted", "--script", script)
	c.initialize()
	sess := c.newSession(dir)
	for _, m := range sess.Modes.AvailableModes {
		if m.Id == "yolo" {
			t.Errorf("the yolo mode is offered: %+v", sess.Modes.AvailableModes)
		}
	}
	_, err = c.conn.SetSessionMode(c.ctx(), acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "yolo"})
	if err == nil || !strings.Contains(errorText(err), yoloRefused(pol)) {
		t.Fatalf("session/set_mode yolo: %v", errorText(err))
	}
	if _, err := c.conn.SetSessionMode(c.ctx(), acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "ask"}); err != nil {
		t.Fatalf("session/set_mode ask: %v", err)
	}
}

// errorText is err with an ACP error's data (where the message is).
func errorText(err error) string {
	if err == nil {
		return "<nil>"
	}
	if re, ok := err.(*acp.RequestError); ok {
		if m, ok := re.Data.(map[string]any); ok {
			if s, ok := m["error"].(string); ok {
				return re.Message + ": " + s
			}
		}
		return re.Message
	}
	return err.Error()
}

// TestPolicyForbidsYoloInServe: a session created over the API in the
// yolo mode, or without a mode on serve --yolo, is refused with the
// policy's line; an ask session is created.
func TestPolicyForbidsYoloInServe(t *testing.T) {
	dir := t.TempDir()
	env, pol, script := policyEnv(t, "forced: {yolo: forbidden}\n")
	ctx, cancel := context.WithTimeout(context.Background(), expectWithin)
	defer cancel()

	p := startServe(t, t.TempDir(), env, "--provider", "scripted", "--script", script)
	if _, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: dir, Mode: serverclient.ModeYolo}); err == nil || !strings.Contains(err.Error(), yoloRefused(pol)) {
		t.Fatalf("a yolo session: %v", err)
	}
	if _, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: dir, Mode: serverclient.ModeAsk}); err != nil {
		t.Fatalf("an ask session: %v", err)
	}

	yolo := startServe(t, t.TempDir(), env, "--yolo", "--provider", "scripted", "--script", script)
	if _, err := yolo.api.CreateSession(ctx, serverclient.CreateSession{Cwd: dir}); err == nil || !strings.Contains(err.Error(), yoloRefused(pol)) {
		t.Fatalf("serve --yolo, a session without a mode: %v", err)
	}
}

// TestPolicyChecksEveryFrontEnd: an MCP server the admin policy does not
// allow, in the agent's file or in a subagent's, stops run, acp and serve
// from opening the session, naming the policy file and rule.
func TestPolicyChecksEveryFrontEnd(t *testing.T) {
	sub := "version: 1\nagent:\n  name: sub\n  system_prompt_path: ./s.md\n  tools: [\"echo:Echo\"]\n  mcp_servers:\n    repo:\n      command: ./tools/server\n"
	agent := strings.Replace(echoAgent, "name: t", "name: t\n  subagents:\n    helper: {path: ./sub.yaml, description: helps}", 1)
	dir := writeFiles(t, map[string]string{".kosong/agent.yaml": agent, ".kosong/sub.yaml": sub, ".kosong/s.md": "hi"})
	env, pol, script := policyEnv(t, "mcp_servers:\n  commands: [/usr/local/bin/*]\n")
	want := "MCP server repo (command " + filepath.Join(dir, ".kosong", "tools/server") + ") is refused by the admin policy " + pol + " (rule mcp_servers.commands: /usr/local/bin/*)"

	r := runHostEnv(t, dir, env, "", "run", "-p", "hi", "--provider", "scripted", "--script", script)
	if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "done") {
		t.Fatalf("run: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	c := startACP(t, dir, env, "--trust", "--provider", "scripted", "--script", script)
	c.initialize()
	if _, err := c.conn.NewSession(c.ctx(), acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{}}); err == nil || !strings.Contains(errorText(err), want) {
		t.Fatalf("acp: session/new: %v", errorText(err))
	}
	// The client's own MCP server is the agent's too.
	plain := t.TempDir()
	client := acp.McpServer{Stdio: &acp.McpServerStdio{Name: "editor", Command: "/opt/editor/mcp", Args: []string{}, Env: []acp.EnvVariable{}}}
	if _, err := c.conn.NewSession(c.ctx(), acp.NewSessionRequest{Cwd: plain, McpServers: []acp.McpServer{client}}); err == nil ||
		!strings.Contains(errorText(err), "MCP server editor (command /opt/editor/mcp) is refused by the admin policy "+pol) {
		t.Fatalf("acp: session/new with the client's MCP server: %v", errorText(err))
	}

	ctx, cancel := context.WithTimeout(context.Background(), expectWithin)
	defer cancel()
	p := startServe(t, t.TempDir(), env, "--trust", "--provider", "scripted", "--script", script)
	if _, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: dir, Agent: filepath.Join(dir, ".kosong", "agent.yaml")}); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("serve: %v", err)
	}
}

// TestPolicyRefusesProjectPlugins: a repository's agent file adding a
// local plugin binary where the admin policy says project_plugins: false
// is refused by run, validate and tools list, even in a trusted folder, in
// one line naming the policy file and rule, and the binary never runs;
// the same plugin named by an agent file outside the project runs.
func TestPolicyRefusesProjectPlugins(t *testing.T) {
	marks := t.TempDir()
	echo := standalonePlugin(t, "echo")
	plug := fmt.Sprintf("#!/bin/sh\ntouch %s/plugin\nexec %s \"$@\"\n", marks, echo)
	agentFile := "version: 1\nagent:\n  name: repo\n  system_prompt_path: ./s.md\n  tools: [\"./bin/plug:Echo\"]\n"
	repo := writeFiles(t, map[string]string{"agent.yaml": agentFile, "s.md": "hi", "bin/plug": plug})
	user := writeFiles(t, map[string]string{"agent.yaml": agentFile, "s.md": "hi", "bin/plug": plug})
	for _, d := range []string{repo, user} {
		if err := os.Chmod(filepath.Join(d, "bin/plug"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env, pol, script := policyEnv(t, "project_plugins: false\n")
	want := "plugin plug added by the project agent file " + filepath.Join(repo, "agent.yaml") + " is refused by the admin policy " + pol + " (rule project_plugins: false)"
	marked := func() bool { return os.Remove(filepath.Join(marks, "plugin")) == nil }

	for _, args := range [][]string{
		{"run", "-p", "hi", "--provider", "scripted", "--script", script},
		{"validate"},
		{"tools", "list"},
	} {
		r := runHostEnv(t, repo, env, "", args...)
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d, want the refusal\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
		}
		if args[0] != "validate" && strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: not one line: %s", args, r.stderr)
		}
		if marked() {
			t.Errorf("%v: the project's plugin ran", args)
		}
	}
	c := startACP(t, repo, env, "--trust", "--provider", "scripted", "--script", script)
	c.initialize()
	if _, err := c.conn.NewSession(c.ctx(), acp.NewSessionRequest{Cwd: repo, McpServers: []acp.McpServer{}}); err == nil || !strings.Contains(errorText(err), want) {
		t.Errorf("acp: session/new: %v", errorText(err))
	}
	if marked() {
		t.Error("acp: the project's plugin ran")
	}

	// The user's agent file, outside the project, may add it.
	r := runHostEnv(t, repo, env, "", "--agent", filepath.Join(user, "agent.yaml"), "tools", "call", "Echo", `{"text":"mine"}`)
	if r.code != 0 || r.stdout != "mine\n" || !marked() {
		t.Fatalf("the user's agent file: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	// Without the rule, the project's plugin runs.
	allowed, _, _ := policyEnv(t, "project_plugins: true\n")
	r = runHostEnv(t, repo, allowed, "", "tools", "call", "Echo", `{"text":"allowed"}`)
	if r.code != 0 || r.stdout != "allowed\n" || !marked() {
		t.Fatalf("project_plugins: true: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
