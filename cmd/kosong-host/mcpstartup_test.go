package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHungMCPServerDoesNotDelayTheFirstStep: a server that never answers
// holds the run up by its startup_timeout, not by a fixed wait; the turn
// runs with the other tools and the failure is a warning.
func TestHungMCPServerDoesNotDelayTheFirstStep(t *testing.T) {
	rows := []struct {
		name, timeout string
		flags         []string
		warning       string
	}{
		{"its startup_timeout", "1s", nil, "no answer to the MCP handshake within 1s"},
		{"the global --mcp-startup-timeout", "120s", []string{"--mcp-startup-timeout", "1s"}, ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{
				"agent.yaml": fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools: ["echo:Echo"]
  mcp_servers:
    hung: {command: %q, args: [-hang], startup_timeout: %s}
`, mcpTestServer(t), row.timeout),
				"s.md":        "",
				"script.yaml": "turns:\n  - tool_calls:\n      - {id: e1, name: Echo, arguments: {text: hi}}\n  - text: done\n",
			})
			start := time.Now()
			args := append(append([]string{}, row.flags...), "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "-p", "go")
			r := runHost(t, dir, "", args...)
			took := time.Since(start)
			if r.code != 0 || !strings.Contains(r.stdout, "done") {
				t.Fatalf("run: %+v", r)
			}
			// A 1 s bound plus the run itself (the fixed wait this replaces
			// was 30 s; the server's own timeout in the second row is 120 s).
			if took > 15*time.Second {
				t.Fatalf("the run took %s with a hung MCP server", took)
			}
			if !strings.Contains(r.stderr, row.warning) {
				t.Fatalf("no warning %q about the hung server: %s", row.warning, r.stderr)
			}
			t.Logf("run with a hung MCP server: %s", took)
		})
	}
}

// TestSlowMCPServerJoinsLater: with --mcp-startup-timeout shorter than a
// server's start, the load does not wait for it, and `tools list` still
// shows its tools once it is up.
func TestSlowMCPServerJoinsLater(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"agent.yaml": fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools: ["echo:Echo"]
  mcp_servers:
    slow: {command: %q, args: [-slow-start, 1500ms], enabled_tools: [echo], startup_timeout: 30s}
`, mcpTestServer(t)),
		"s.md": "",
	})
	r := runHost(t, dir, "", "--mcp-startup-timeout", "200ms", "tools", "list", "--json")
	if r.code != 0 {
		t.Fatalf("tools list: %+v", r)
	}
	var rows []struct{ Name, Status string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	got := map[string]string{}
	for _, row := range rows {
		got[row.Name] = row.Status
	}
	if got["slow__echo"] != "loaded" || got["Echo"] != "loaded" {
		t.Fatalf("tools list: %s", r.stdout)
	}
	// Its tools joined the toolset: they can be called.
	r = runHost(t, dir, "", "--mcp-startup-timeout", "200ms", "tools", "call", "slow__echo", `{"text":"late"}`, "--yolo")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "late" {
		t.Fatalf("tools call: %+v", r)
	}
}

// TestClaudeDesktopConfigLoads: Claude Desktop's config file, with its
// `disabled` and `autoApprove` keys and a key kosong-host does not know,
// loads through --mcp-config-file; the unknown key is a warning naming the
// file.
func TestClaudeDesktopConfigLoads(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"agent.yaml": echoAgent,
		"s.md":       "",
		"claude_desktop_config.json": fmt.Sprintf(`{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "test": {"command": %q, "args": [], "env": {"DEBUG": "1"}, "autoApprove": ["echo"], "alwaysAllow": ["add"], "icon": "x.png"},
    "off": {"command": "/nonexistent/server", "disabled": true}
  }
}`, mcpTestServer(t)),
	})
	r := runHost(t, dir, "", "--mcp-config-file", "claude_desktop_config.json", "tools", "call", "test__echo", `{"text":"from claude's config"}`, "--yolo")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "from claude's config" {
		t.Fatalf("call: %+v", r)
	}
	if !strings.Contains(r.stderr, dir+"/claude_desktop_config.json:4: mcp server \"test\": unknown key \"icon\" ignored") {
		t.Fatalf("no warning naming the file: %s", r.stderr)
	}
	if strings.Contains(r.stderr, "nonexistent") {
		t.Fatalf("the disabled server was started: %s", r.stderr)
	}
}
