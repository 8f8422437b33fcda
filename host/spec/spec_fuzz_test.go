package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fuzzBound is how long one input may take: far more than any parse needs,
// so that a hang is reported with its input instead of stalling the fuzzer.
const fuzzBound = 5 * time.Second

// within runs fn, failing the test if it does not return within fuzzBound.
func within(t *testing.T, data string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(fuzzBound):
		t.Fatalf("no answer after %s for %q", fuzzBound, data)
	}
}

// checkError: every error of the parsers is a one-line *Error naming the file.
func checkError(t *testing.T, err error, file string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %T is not a *spec.Error: %v", err, err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error is not one line: %q", msg)
	}
	if !strings.Contains(msg, file) {
		t.Fatalf("error does not name %s: %q", file, msg)
	}
}

// seedSpecs adds the agent files of the repository and a few that use
// every key.
func seedSpecs(f *testing.F) {
	paths, _ := filepath.Glob("../../agents/*/*.yaml")
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(string(data))
		}
	}
	f.Add(minimal)
	f.Add(`version: 1
agent:
  extend: default
  name: full
  system_prompt_path: ./system.md
  system_prompt_args: {ROLE: coder, "X": "y"}
  tools:
    - echo:Echo
    - plugin: ./bin/kosong-plugin-web
      tools: [FetchURL, SearchWeb]
      sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
      timeout: 30s
      env: [SEARCH_API_KEY]
      config: {endpoint: "http://localhost:1/search", allowed_addresses: ["127.0.0.1:8080"]}
    - {plugin: web, tools: [FetchURL], config: {allow_private_addresses: true}}
  allowed_tools: ["echo:Echo"]
  exclude_tools: ["web:SearchWeb", {plugin: web, tools: [FetchURL]}]
  subagents:
    explore: {path: ./explore.yaml, description: "Looks around"}
  model: kimi-k2
  mcp_servers:
    gh: {command: npx, args: [-y, server], env: {TOKEN: "${TOKEN}"}, cwd: ./w, enabled_tools: [a], disabled_tools: [b], timeout: 10}
    docs: {url: "https://example.com/mcp", headers: {A: b}, prefix: false, transport: sse}
`)
	f.Add("version: 1\nagent: &a\n  name: *a\n  tools: [*a]\n")
	f.Add("version: 2\n")
	f.Add("- just\n- a list\n")
	f.Add("version: 1\nagent:\n  name: x\n  tools: [\"::\", \"a:\", \":b\", \"\"]\n  system_prompt_path: \"\"\n")
	f.Add("a: b\n---\nc: d\n")
	f.Add("version: 1\nagent: {name: n, system_prompt_path: s, tools: [{plugin: p, tools: [A], config: 1}, {plugin: p, tools: [A], config: 2}]}\n")
}

// FuzzParseAgentSpec: parsing an agent spec file never panics, an error
// is one line naming the file, and a spec that parses has what Load
// promises (a name, a prompt path, tools); merging its plugin references
// fails only with a one-line error.
func FuzzParseAgentSpec(f *testing.F) {
	seedSpecs(f)
	path := filepath.Join(f.TempDir(), "agent.yaml")
	f.Fuzz(func(t *testing.T, data string) {
		var pf *file
		var err error
		within(t, data, func() { pf, err = parseFile(path, []byte(data)) })
		if err != nil {
			checkError(t, err, path)
			return
		}
		s, err := finish(path, []string{path}, pf)
		if err != nil {
			checkError(t, err, path)
			return
		}
		if s.Name == "" || s.Tools == nil && len(s.Tools) != 0 {
			t.Fatalf("spec without a name or tools: %+v", s)
		}
		for _, sa := range s.Subagents {
			if !filepath.IsAbs(sa.Path) {
				t.Fatalf("subagent path %q is not absolute", sa.Path)
			}
		}
		if _, err := s.Plugins(); err != nil && strings.ContainsAny(err.Error(), "\n\r") {
			t.Fatalf("Plugins error is not one line: %q", err)
		}
	})
}

// FuzzLoadMCPConfig: loading an MCP config file never panics, an error is
// one line naming the file, and every server loaded has a valid name, one
// transport and its location.
func FuzzLoadMCPConfig(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {}}`,
		`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"A": "b"}}}}`,
		`{"mcpServers": {"docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${T}"}, "type": "http"}}}`,
		`{"mcpServers": {"old": {"url": "http://127.0.0.1:9/sse", "transport": "sse", "timeout": "30s", "prefix": false}}}`,
		`{"mcpServers": {"t": {"command": "./srv", "cwd": "w", "enabled_tools": ["a", "b"], "disabled_tools": ["c"], "timeout": 5}}}`,
		`{"theme": "dark", "mcpServers": {"x": {"command": "x", "disabled": true, "autoApprove": ["a"]}}}`,
		`{"mcpServers": {"both": {"command": "x", "url": "http://x"}}}`,
		`{"mcpServers": {"bad name!": {"command": "x"}}}`,
		`{"mcpServers": []}`,
		`{"other": 1}`,
		`[1, 2]`,
		`{"mcpServers": {"a": {"command": "x", "env": {"1BAD": "v"}}}}`,
		`{"mcpServers": {"a": {"url": "ftp://x"}}}`,
		`{"mcpServers": {"a": {"command": "x", "transport": "carrier pigeon"}}}`,
		`{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`,
		"",
		"{",
	} {
		f.Add(s)
	}
	path := filepath.Join(f.TempDir(), "mcp.json")
	f.Fuzz(func(t *testing.T, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		var servers []MCPServer
		var err error
		within(t, data, func() { servers, err = LoadMCPConfig(path) })
		if err != nil {
			checkError(t, err, path)
			return
		}
		for _, s := range servers {
			if s.Name == "" || len(s.Name) > 64 || (s.Command == "") == (s.URL == "") || s.File != path || s.Line < 1 {
				t.Fatalf("server %+v", s)
			}
			if s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
				t.Fatalf("cwd %q is not absolute", s.Cwd)
			}
		}
	})
}
