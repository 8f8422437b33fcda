package spec

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestProviderKeyInPluginEnv: a plugin's env may not name a provider key
// variable unless the reference says allow_secrets: true.
func TestProviderKeyInPluginEnv(t *testing.T) {
	tests := []struct {
		name, tools, want string
	}{
		{"openai key", "    - {plugin: p, env: [HOME, OPENAI_API_KEY]}\n", `$D/agent.yaml:5: tools entry: plugin p: env names the provider key variable OPENAI_API_KEY, which never reaches a plugin unless this entry says allow_secrets: true`},
		{"anthropic token", "    - {plugin: ./bin/q, env: [ANTHROPIC_AUTH_TOKEN]}\n", `plugin q: env names the provider key variable ANTHROPIC_AUTH_TOKEN`},
		{"gemini key", "    - {plugin: p, env: [GEMINI_API_KEY]}\n", `provider key variable GEMINI_API_KEY`},
		{"moonshot key", "    - {plugin: p, env: [MOONSHOT_API_KEY], allow_secrets: false}\n", `provider key variable MOONSHOT_API_KEY`},
		{"allow_secrets not a bool", "    - {plugin: p, allow_secrets: maybe}\n", `allow_secrets`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, dir, err := load(t, map[string]string{
				"agent.yaml": "agent:\n  name: a\n  system_prompt_path: s.md\n  tools:\n" + tt.tools,
			}, "agent.yaml", LoadOptions{})
			want := strings.ReplaceAll(tt.want, "$D", dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v\nwant %q", err, want)
			}
		})
	}
	s, _ := loadTools(t, "    - {plugin: p, env: [KIMI_API_KEY, HOME], allow_secrets: true}\n")
	ps, err := s.Plugins()
	if err != nil || len(ps) != 1 || strings.Join(ps[0].Env, ",") != "HOME,KIMI_API_KEY" {
		t.Fatalf("allowed: %+v %v", ps, err)
	}
}

// TestProviderKeyInMCPServer: an MCP server's env or headers may not expand
// a provider key variable as ${NAME} unless the entry says allow_secrets:
// true, in agent.yaml as in an MCP config file; the error names the file,
// the line and the server.
func TestProviderKeyInMCPServer(t *testing.T) {
	const head = "agent:\n  name: a\n  system_prompt_path: s.md\n  tools: [\"e:E\"]\n  mcp_servers:\n"
	tests := []struct {
		name, servers, want string
	}{
		{"env", "    gh:\n      command: gh-mcp\n      env: {HOME: x, K: \"${OPENAI_API_KEY}\"}\n",
			`$D/agent.yaml:8: mcp server "gh": env K expands the provider key variable OPENAI_API_KEY, which never reaches an MCP server unless this entry says allow_secrets: true`},
		{"env inside a value", "    gh:\n      command: gh-mcp\n      env: {K: \"pre-${ANTHROPIC_AUTH_TOKEN}-post\"}\n",
			`mcp server "gh": env K expands the provider key variable ANTHROPIC_AUTH_TOKEN`},
		{"headers", "    docs:\n      url: https://docs.example/mcp\n      headers:\n        Authorization: \"Bearer ${KIMI_API_KEY}\"\n",
			`$D/agent.yaml:9: mcp server "docs": headers Authorization expands the provider key variable KIMI_API_KEY`},
		{"allow_secrets false", "    gh:\n      command: gh-mcp\n      allow_secrets: false\n      env: {K: \"${MOONSHOT_API_KEY}\"}\n",
			`provider key variable MOONSHOT_API_KEY`},
		{"allow_secrets not a bool", "    gh:\n      command: gh-mcp\n      allow_secrets: yes-please\n", `mcp server "gh": allow_secrets must be true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, dir, err := load(t, map[string]string{"agent.yaml": head + tt.servers}, "agent.yaml", LoadOptions{})
			want := strings.ReplaceAll(tt.want, "$D", dir)
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v\nwant %q", err, want)
			}
		})
	}

	s, _, err := load(t, map[string]string{"agent.yaml": head +
		"    gh:\n      command: gh-mcp\n      env: {K: \"${OPENAI_API_KEY}\", T: \"${GITHUB_TOKEN}\"}\n      allow_secrets: true\n" +
		"    plain:\n      command: other\n      env: {T: \"${GITHUB_TOKEN}\", D: \"$OPENAI_API_KEY\"}\n"}, "agent.yaml", LoadOptions{})
	if err != nil || len(s.MCPServers) != 2 || !s.MCPServers[0].AllowSecrets {
		t.Fatalf("allowed: %+v %v", s, err)
	}

	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"mcp.json": `{"mcpServers": {
  "ok": {"command": "x", "env": {"T": "${GITHUB_TOKEN}"}},
  "keyed": {"url": "https://h.example/mcp", "headers": {"X-Key": "${GEMINI_API_KEY}"}}
}}`})
	_, err = LoadMCPConfig(filepath.Join(dir, "mcp.json"))
	want := filepath.Join(dir, "mcp.json") + `:3: mcp server "keyed": headers X-Key expands the provider key variable GEMINI_API_KEY`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("MCP config file: error %v\nwant %q", err, want)
	}
}

// TestCheckSecrets: the key variables a configuration file names
// (api_key_env) are refused as the built-in ones are, once the caller
// passes them.
func TestCheckSecrets(t *testing.T) {
	files := map[string]string{
		"agent.yaml": "agent:\n  name: a\n  system_prompt_path: s.md\n  tools:\n    - {plugin: p, env: [HOME, CORP_LLM_TOKEN]}\n" +
			"    - {plugin: q, env: [CORP_LLM_TOKEN], allow_secrets: true}\n" +
			"  mcp_servers:\n    m:\n      command: m\n      env: {K: \"${CORP_LLM_TOKEN}\"}\n" +
			"    n:\n      command: n\n      env: {K: \"${CORP_LLM_TOKEN}\"}\n      allow_secrets: true\n",
	}
	s, dir, err := load(t, files, "agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err) // CORP_LLM_TOKEN is no key variable Load knows
	}
	refs, err := s.Plugins()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		plugins []PluginRef
		servers []MCPServer
		extra   []string
		want    string // "" for no error
	}{
		{"plugin env", refs, nil, []string{"OTHER", "CORP_LLM_TOKEN"},
			`$D/agent.yaml:5: plugin p: env names the provider key variable CORP_LLM_TOKEN, which never reaches a plugin unless this entry says allow_secrets: true`},
		{"MCP env", nil, s.MCPServers, []string{"CORP_LLM_TOKEN"},
			`$D/agent.yaml:8: mcp server "m": env K expands the provider key variable CORP_LLM_TOKEN`},
		{"not a key variable", refs, s.MCPServers, []string{"OTHER"}, ""},
		{"no configured names", refs, s.MCPServers, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSecrets(tt.plugins, tt.servers, tt.extra)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			want := strings.ReplaceAll(tt.want, "$D", dir)
			if err == nil || err.Error() != want && !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %v\nwant %q", err, want)
			}
		})
	}
}
