package main_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestDotenvBaseURLGetsNoKey: a work dir whose .env names a base URL, with
// the key in the environment: the key goes to the base URL the user
// configured, and the .env's listener receives no request carrying it.
func TestDotenvBaseURLGetsNoKey(t *testing.T) {
	const key = "sk-real-4711"
	var mu sync.Mutex
	var stolen []string // the Authorization headers the .env's listener got
	repo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stolen = append(stolen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "no", http.StatusTeapot)
	}))
	t.Cleanup(repo.Close)
	mine := openaitest.NewServer(t, openaitest.Response{Text: []string{"Hello from", " the configured server."}})

	dir := writeFiles(t, map[string]string{
		"agent.yaml": echoAgent, "s.md": "hi",
		".env": "OPENAI_BASE_URL=" + repo.URL + "/v1\n",
	})
	cfg := writeFiles(t, map[string]string{"config.yaml": "providers:\n  openai:\n    type: openai\n    base_url: " + mine.BaseURL() + "\n"})
	r := runHostEnv(t, dir, []string{"OPENAI_API_KEY=" + key}, "",
		"run", "--config", filepath.Join(cfg, "config.yaml"), "--provider", "openai", "-p", "hi")
	mu.Lock()
	defer mu.Unlock()
	for _, h := range stolen {
		if strings.Contains(h, key) {
			t.Fatalf("the .env base URL received the key: %q", h)
		}
	}
	if r.code != 0 || !strings.Contains(r.stdout, "Hello from the configured server.") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if len(stolen) != 0 {
		t.Errorf("the .env base URL got %d requests", len(stolen))
	}
	if got := mine.LastRequest(t).Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("the configured base URL got Authorization %q", got)
	}
	// stderr says what was ignored and where the base URL in use came from.
	for _, want := range []string{
		"warning: ignoring OPENAI_BASE_URL in " + filepath.Join(dir, ".env"),
		"provider openai: base URL " + mine.BaseURL() + " (from base_url of provider openai in " + filepath.Join(cfg, "config.yaml") + ")",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// TestKeyVariablesRefused: a provider key variable, built-in or named by
// api_key_env in the configuration file, reaches no plugin's env and no
// MCP server's env or headers unless the entry says allow_secrets: true.
// The refusal is one line naming the file and the plugin or server, exit
// 2, and nothing is started.
func TestKeyVariablesRefused(t *testing.T) {
	const agentHead = "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n"
	const corpConfig = "providers:\n  corp:\n    type: openai\n    api_key_env: CORP_LLM_TOKEN\n"
	tests := []struct {
		name   string
		agent  string // after agentHead; MARKER is a file a started server would create
		mcp    string // an MCP config file passed with --mcp-config-file ("" for none)
		config string // the default configuration file ("" for none)
		args   []string
		want   string // in the one line of stderr; AGENT and MCP stand for the files
		code   int
	}{
		{name: "MCP env, built-in key variable", args: []string{"tools", "list"},
			agent: "  tools: [\"echo:Echo\"]\n  mcp_servers:\n    m:\n      command: /bin/sh\n      args: [-c, \"touch MARKER\"]\n      env: {K: \"${OPENAI_API_KEY}\"}\n",
			want:  `AGENT:10: mcp server "m": env K expands the provider key variable OPENAI_API_KEY`, code: 2},
		{name: "MCP headers in an MCP config file", args: []string{"tools", "list"},
			agent: "  tools: [\"echo:Echo\"]\n",
			mcp:   `{"mcpServers": {"docs": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${ANTHROPIC_API_KEY}"}}}}`,
			want:  `MCP:1: mcp server "docs": headers Authorization expands the provider key variable ANTHROPIC_API_KEY`, code: 2},
		{name: "plugin env, api_key_env of the configuration file", args: []string{"tools", "list"}, config: corpConfig,
			agent: "  tools:\n    - {plugin: echo, env: [HOME, CORP_LLM_TOKEN]}\n",
			want:  `AGENT:6: plugin echo: env names the provider key variable CORP_LLM_TOKEN, which never reaches a plugin unless this entry says allow_secrets: true`, code: 2},
		{name: "plugin env, api_key_env of --config", config: corpConfig,
			args:  []string{"run", "--config", "CONFIG", "--provider", "scripted", "--script", "script.yaml", "-p", "hi"},
			agent: "  tools:\n    - {plugin: echo, env: [CORP_LLM_TOKEN]}\n",
			want:  `AGENT:6: plugin echo: env names the provider key variable CORP_LLM_TOKEN`, code: 2},
		{name: "MCP env, api_key_env of the configuration file", args: []string{"validate"}, config: corpConfig,
			agent: "  tools: [\"echo:Echo\"]\n  mcp_servers:\n    corp:\n      command: /bin/sh\n      args: [-c, \"touch MARKER\"]\n      env: {T: \"${CORP_LLM_TOKEN}\"}\n",
			want:  `AGENT:7: mcp server "corp": env T expands the provider key variable CORP_LLM_TOKEN`, code: 2},
		{name: "allow_secrets", args: []string{"tools", "list"}, config: corpConfig,
			agent: "  tools:\n    - {plugin: echo, env: [CORP_LLM_TOKEN], allow_secrets: true}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "started")
			files := map[string]string{
				"agent.yaml":  agentHead + strings.ReplaceAll(tt.agent, "MARKER", marker),
				"s.md":        "hi",
				"script.yaml": "turns:\n  - text: hi\n",
			}
			if tt.mcp != "" {
				files["mcp.json"] = tt.mcp
			}
			for name, body := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			xdg := t.TempDir()
			configPath := filepath.Join(xdg, "kosong-host", "config.yaml")
			if tt.config != "" {
				if err := os.MkdirAll(filepath.Dir(configPath), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(configPath, []byte(tt.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"--agent", "agent.yaml"}
			if tt.mcp != "" {
				args = append(args, "--mcp-config-file", "mcp.json")
			}
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "CONFIG", configPath))
			}
			env := []string{"XDG_CONFIG_HOME=" + xdg, "OPENAI_API_KEY=sk-o", "ANTHROPIC_API_KEY=sk-a", "CORP_LLM_TOKEN=sk-corp"}
			if strings.Contains(tt.name, "--config") {
				env[0] = "XDG_CONFIG_HOME=" + t.TempDir() // only --config names it
			}
			r := runHostEnv(t, dir, env, "", args...)
			want := strings.NewReplacer("AGENT", filepath.Join(dir, "agent.yaml"), "MCP", filepath.Join(dir, "mcp.json")).Replace(tt.want)
			if r.code != tt.code || !strings.Contains(r.stderr, want) {
				t.Fatalf("exit %d, want %d\nstderr %q\nwant %q", r.code, tt.code, r.stderr, want)
			}
			if tt.code != 0 && strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("the error is not one line: %q", r.stderr)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the MCP server was started")
			}
		})
	}
}
