package main_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTypos: every mistyped name exits 2 with a "did you mean".
func TestTypos(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"agent.yaml":   echoAgent,
		"s.md":         "hi",
		"typo.yaml":    "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [ecko]\n",
		"exclude.yaml": "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"echo:Echo\", \"think:Think\"]\n  exclude_tools: [Thnk]\n",
		"config.yaml": "providers:\n  local: {type: openai, base_url: \"http://127.0.0.1:1\", api_key: x}\n" +
			"models:\n  sonnet: {provider: local, model: m}\n",
		"script.yaml": "turns:\n  - text: hi\n",
	})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"tools entry", []string{"--agent", "typo.yaml", "tools", "list"}, "(did you mean echo?)"},
		{"exclude_tools entry", []string{"--agent", "exclude.yaml", "validate"}, `exclude_tools entry "Thnk" matches no tool or plugin of the agent (did you mean Think?)`},
		{"tools call", []string{"tools", "call", "Ecko", "{}"}, "Tool `Ecko` not found in agent.yaml (did you mean Echo?)"},
		{"tools describe", []string{"tools", "describe", "Ecko"}, "(did you mean Echo?)"},
		{"--model", []string{"run", "--config", "config.yaml", "--model", "sonet", "-p", "hi"}, "--model sonet is not a model alias (did you mean sonnet?)"},
		{"--provider", []string{"run", "--provider", "scriptd", "--script", "script.yaml", "-p", "hi"}, "(did you mean scripted?)"},
		{"--plugin-dir", []string{"--plugin-dir", filepath.Join(dir, "nonexistent"), "tools", "list"}, "no such directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHost(t, dir, "", tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	r := runHost(t, t.TempDir(), "", "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "kosong-host ") {
		t.Fatalf("%+v", r)
	}
}
