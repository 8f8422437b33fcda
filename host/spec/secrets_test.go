package spec

import (
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
