package spec

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const mcpHead = "version: 1\nagent:\n  name: a\n  system_prompt_path: ./s.md\n  tools: []\n"

func TestMCPServers(t *testing.T) {
	s, dir, err := load(t, map[string]string{"agent.yaml": mcpHead + `  mcp_servers:
    github:
      command: npx
      args: [-y, "@modelcontextprotocol/server-github"]
      env: {GITHUB_TOKEN: "${GITHUB_TOKEN}", N: 1}
    local:
      command: ./bin/server
      cwd: work
      transport: stdio
    docs:
      url: https://example.com/mcp
      headers: {Authorization: "Bearer x"}
      type: streamable-http
      prefix: false
      enabled_tools: [search, fetch, search]
      disabled_tools: [fetch]
      timeout: 30s
    n:
      url: http://127.0.0.1:8080/mcp
      timeout: 1.5
    legacy:
      url: http://127.0.0.1:8081/sse
      transport: SSE
`}, "agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "agent.yaml")
	want := []MCPServer{
		{Name: "github", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
			Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}", "N": "1"}, Prefix: true, File: file, Line: 7},
		{Name: "local", Command: filepath.Join(dir, "bin/server"), Cwd: filepath.Join(dir, "work"), Prefix: true, File: file, Line: 11},
		{Name: "docs", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"},
			EnabledTools: []string{"search", "fetch"}, DisabledTools: []string{"fetch"}, Timeout: 30 * time.Second, File: file, Line: 15},
		{Name: "n", URL: "http://127.0.0.1:8080/mcp", Prefix: true, Timeout: 1500 * time.Millisecond, File: file, Line: 23},
		{Name: "legacy", URL: "http://127.0.0.1:8081/sse", SSE: true, Prefix: true, File: file, Line: 26},
	}
	if !reflect.DeepEqual(s.MCPServers, want) {
		t.Fatalf("got  %+v\nwant %+v", s.MCPServers, want)
	}
	docs := s.MCPServers[2]
	if docs.Stdio() || docs.Wants("fetch") || !docs.Wants("search") || docs.Wants("other") || docs.ToolName("search") != "search" {
		t.Fatalf("docs: %+v", docs)
	}
	if gh := s.MCPServers[0]; !gh.Stdio() || !gh.Wants("anything") || gh.ToolName("x") != "github__x" || gh.Where() != file+":7" {
		t.Fatalf("github: %+v", gh)
	}
}

func TestMCPServersExtend(t *testing.T) {
	base := mcpHead + "  mcp_servers:\n    a: {command: x}\n"
	tests := []struct {
		name, child string
		want        []string
	}{
		{"inherited", "version: 1\nagent:\n  extend: ./base.yaml\n", []string{"a"}},
		{"replaced", "version: 1\nagent:\n  extend: ./base.yaml\n  mcp_servers:\n    b: {command: y}\n", []string{"b"}},
		{"removed", "version: 1\nagent:\n  extend: ./base.yaml\n  mcp_servers:\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, err := load(t, map[string]string{"base.yaml": base, "agent.yaml": tt.child}, "agent.yaml", LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range s.MCPServers {
				names = append(names, m.Name)
			}
			if !reflect.DeepEqual(names, tt.want) {
				t.Fatalf("servers %v, want %v", names, tt.want)
			}
		})
	}
}

func TestMCPServerErrors(t *testing.T) {
	tests := []struct {
		name, servers, want string
	}{
		{"not a mapping", "  mcp_servers: [a]\n", ":6: mcp_servers must be a mapping, got a list"},
		{"unknown key", "  mcp_servers:\n    a: {command: x, cmd: y}\n", `:7: unknown key "cmd" in mcp server "a" (known keys: command, args, env, cwd, sandbox, url, headers, transport, type, prefix, enabled_tools, disabled_tools, timeout, startup_timeout, disabled, allow_secrets)`},
		{"bad name", "  mcp_servers:\n    a.b: {command: x}\n", `:7: invalid MCP server name "a.b"`},
		{"neither", "  mcp_servers:\n    a: {prefix: true}\n", `:7: mcp server "a": command (stdio) or url (streamable HTTP) is required`},
		{"both", "  mcp_servers:\n    a: {command: x, url: http://h/mcp}\n", `:7: mcp server "a": give command (stdio) or url (streamable HTTP), not both`},
		{"args with url", "  mcp_servers:\n    a:\n      url: http://h/mcp\n      args: [x]\n", `:9: mcp server "a": args is for stdio servers (with command), not with url`},
		{"headers with command", "  mcp_servers:\n    a:\n      command: x\n      headers: {A: b}\n", `:9: mcp server "a": headers are for HTTP servers (with url), not with command`},
		{"bad url", "  mcp_servers:\n    a: {url: ftp://h/x}\n", `mcp server "a": invalid url "ftp://h/x" (want http:// or https://)`},
		{"sse with command", "  mcp_servers:\n    a: {command: x, type: sse}\n", `mcp server "a": transport sse needs url, not command`},
		{"transport mismatch", "  mcp_servers:\n    a: {command: x, transport: http}\n", `mcp server "a": transport http needs url, not command`},
		{"unknown transport", "  mcp_servers:\n    a: {command: x, type: ws}\n", `mcp server "a": unknown transport "ws" (want stdio, http or sse)`},
		{"prefix not bool", "  mcp_servers:\n    a: {command: x, prefix: yes please}\n", `mcp server "a": prefix must be true or false, got yes please`},
		{"bad timeout", "  mcp_servers:\n    a: {command: x, timeout: soon}\n", `mcp server "a": timeout: invalid timeout soon`},
		{"negative timeout", "  mcp_servers:\n    a: {command: x, timeout: -1}\n", `mcp server "a": timeout: invalid timeout -1`},
		{"bad env name", "  mcp_servers:\n    a: {command: x, env: {1A: b}}\n", `mcp server "a": invalid environment variable name "1A"`},
		{"env not a map", "  mcp_servers:\n    a: {command: x, env: [A]}\n", `mcp server "a": env must be a mapping, got a list`},
		{"two urls", "  mcp_servers:\n    a: {url: http://h/mcp, serverUrl: http://h/mcp}\n", `mcp server "a": give one of url, httpUrl and serverUrl`},
		{"bad startup_timeout", "  mcp_servers:\n    a: {command: x, startup_timeout: later}\n", `mcp server "a": startup_timeout: invalid timeout later`},
		{"disabled not bool", "  mcp_servers:\n    a: {command: x, disabled: maybe}\n", `mcp server "a": disabled must be true or false, got maybe`},
		{"autoApprove not a list", "  mcp_servers:\n    a: {command: x, autoApprove: all}\n", `mcp server "a": autoApprove must be a list`},
		{"empty command", "  mcp_servers:\n    a: {command: ''}\n", `mcp server "a": command must not be empty`},
		{"empty tool name", "  mcp_servers:\n    a: {command: x, enabled_tools: ['']}\n", `mcp server "a": enabled_tools: empty tool name`},
		{"transport and type", "  mcp_servers:\n    a: {command: x, transport: stdio, type: stdio}\n", `mcp server "a": give transport or type, not both`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, dir, err := load(t, map[string]string{"agent.yaml": mcpHead + tt.servers}, "agent.yaml", LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), filepath.Join(dir, "agent.yaml")+":") {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoadMCPConfig(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"mcp.json": "{\n\t\"globalShortcut\": \"x\",\n\t\"mcpServers\": {\n\t\t\"fs\": {\"command\": \"./srv\", \"args\": [\"-v\"], \"env\": {\"A\": \"b\"}},\n" +
			"\t\t\"web\": {\"url\": \"https://h/mcp\", \"type\": \"http\", \"headers\": {\"X\": \"y\"}, \"prefix\": false, \"timeout\": 5}\n\t}\n}\n",
		"bad.json":     `{"mcpServers": {"fs": {"command": "x",}}}`,
		"nokey.json":   `{"servers": {}}`,
		"array.json":   `[1]`,
		"unknown.json": "{\"mcpServers\": {\n  \"fs\": {\"command\": \"x\", \"autoApprove\": 3}\n}}",
	})
	got, err := LoadMCPConfig(filepath.Join(dir, "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "mcp.json")
	want := []MCPServer{
		{Name: "fs", Command: filepath.Join(dir, "srv"), Args: []string{"-v"}, Env: map[string]string{"A": "b"}, Prefix: true, File: file, Line: 4},
		{Name: "web", URL: "https://h/mcp", Headers: map[string]string{"X": "y"}, Timeout: 5 * time.Second, File: file, Line: 5},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	errs := map[string]string{
		"nope.json":    "MCP config file not found: " + filepath.Join(dir, "nope.json"),
		"bad.json":     "Invalid JSON in MCP config file: " + filepath.Join(dir, "bad.json") + ": invalid character '}'",
		"nokey.json":   filepath.Join(dir, "nokey.json") + `: no "mcpServers" key in MCP config file`,
		"array.json":   filepath.Join(dir, "array.json") + `:1: MCP config file must be a JSON object with "mcpServers"`,
		"unknown.json": filepath.Join(dir, "unknown.json") + `:2: mcp server "fs": autoApprove must be a list`,
	}
	for name, want := range errs {
		_, err := LoadMCPConfig(filepath.Join(dir, name))
		var se *Error
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &se) {
			t.Errorf("%s: err = %v, want %q", name, err, want)
		}
	}
}

func TestMergeMCPServers(t *testing.T) {
	a := []MCPServer{{Name: "x", File: "/a.yaml", Line: 3}, {Name: "y", File: "/a.yaml", Line: 4}}
	b := []MCPServer{{Name: "z", File: "/b.json", Line: 2}}
	got, err := MergeMCPServers(a, b)
	if err != nil || len(got) != 3 || got[2].Name != "z" {
		t.Fatalf("merge: %+v, %v", got, err)
	}
	_, err = MergeMCPServers(a, []MCPServer{{Name: "y", File: "/b.json", Line: 7}})
	if err == nil || err.Error() != `/b.json:7: MCP server "y" is also defined at /a.yaml:4` {
		t.Fatalf("err = %v", err)
	}
}

// TestOtherHostsMCPConfigs: the config files of Claude Desktop, Cursor,
// Cline/Roo, Codex (as JSON), Gemini CLI and Windsurf load; their keys are
// mapped, and any other unknown key is a warning naming the file.
func TestOtherHostsMCPConfigs(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"claude_desktop_config.json": `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"],
      "env": {"DEBUG": "1"},
      "disabled": true,
      "autoApprove": ["read_file"]
    },
    "roo": {"command": "uvx", "args": ["mcp-server-git"], "alwaysAllow": ["git_status"], "disabledTools": ["git_push"], "timeout": 30, "transportType": "stdio"},
    "codex": {"command": "srv", "enabled": false, "startup_timeout_sec": 20, "tool_timeout_sec": 90},
    "codexms": {"command": "srv", "startup_timeout_ms": 2500},
    "gemini": {"httpUrl": "https://g/mcp", "includeTools": ["a"], "excludeTools": ["b"], "trust": true},
    "windsurf": {"serverUrl": "https://w/mcp", "type": "http"},
    "cursor": {"command": "srv", "envFile": ".env", "icon": "x.png"}
  }
}`,
	})
	path := filepath.Join(dir, "claude_desktop_config.json")
	got, err := LoadMCPConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]MCPServer{}
	for _, s := range got {
		by[s.Name] = s
	}
	fs := by["filesystem"]
	if fs.Command != "npx" || !fs.Disabled || !reflect.DeepEqual(fs.AutoApprove, []string{"read_file"}) || fs.Env["DEBUG"] != "1" || len(fs.Warnings) != 0 {
		t.Errorf("filesystem: %+v", fs)
	}
	roo := by["roo"]
	if !reflect.DeepEqual(roo.AutoApprove, []string{"git_status"}) || !reflect.DeepEqual(roo.DisabledTools, []string{"git_push"}) || roo.Timeout != 30*time.Second {
		t.Errorf("roo: %+v", roo)
	}
	codex := by["codex"]
	if !codex.Disabled || codex.StartupTimeout != 20*time.Second || codex.Timeout != 90*time.Second {
		t.Errorf("codex: %+v", codex)
	}
	if d := by["codexms"].StartupTimeout; d != 2500*time.Millisecond {
		t.Errorf("codex startup_timeout_ms: %s", d)
	}
	gem := by["gemini"]
	if gem.URL != "https://g/mcp" || !reflect.DeepEqual(gem.EnabledTools, []string{"a"}) || !reflect.DeepEqual(gem.DisabledTools, []string{"b"}) || !reflect.DeepEqual(gem.AutoApprove, []string{"*"}) {
		t.Errorf("gemini: %+v", gem)
	}
	if by["windsurf"].URL != "https://w/mcp" {
		t.Errorf("windsurf: %+v", by["windsurf"])
	}
	want := []string{
		path + `:15: mcp server "cursor": unknown key "envFile" ignored`,
		path + `:15: mcp server "cursor": unknown key "icon" ignored`,
	}
	if !reflect.DeepEqual(by["cursor"].Warnings, want) {
		t.Errorf("warnings %q\nwant %q", by["cursor"].Warnings, want)
	}
	// In agent.yaml an unknown key stays an error; the standard ones load.
	_, _, err = load(t, map[string]string{"agent.yaml": "agent:\n  name: a\n  system_prompt_path: s.md\n  mcp_servers:\n    a: {command: x, startup_timeout: 3s, disabled: true, envFile: y}\n"}, "agent.yaml", LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), `unknown key "envFile" in mcp server "a"`) {
		t.Errorf("agent.yaml: %v", err)
	}
}
