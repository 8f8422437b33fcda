package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateAndRunSayTheSame: validate and run refuse the same bad agent
// with the same error line and exit code, as both go through the one
// assembly (conversation.Check and conversation.Open).
func TestValidateAndRunSayTheSame(t *testing.T) {
	const agent = "version: 1\nagent:\n  name: bad\n  system_prompt_path: ./s.md\n  tools: []\n"
	tests := []struct {
		name  string
		files map[string]string
		flags []string
		want  string
	}{
		{"undefined variable", map[string]string{"s.md": "Hi ${WHO}."}, nil, "${WHO} is not defined"},
		{"bad hook in the spec", map[string]string{"agent.yaml": agent + "  hooks:\n    - {event: PreTool, command: x}\n"}, nil,
			`unknown event "PreTool"`},
		{"bad hook in the configuration", map[string]string{"config.yaml": "hooks:\n  - {event: PreTool, command: x}\n"},
			[]string{"--config", "config.yaml"}, `unknown event "PreTool"`},
		{"rule for an unknown tool", map[string]string{"agent.yaml": agent + "  permissions:\n    deny: [\"Nope(x)\"]\n"}, nil,
			"unknown tool Nope"},
		{"unknown provider", nil, []string{"--provider", "nope"}, `"nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"agent.yaml": agent, "s.md": "You help.", "script.yaml": "turns:\n  - text: hi\n"}
			for k, v := range tt.files {
				files[k] = v
			}
			for name, body := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			flags := tt.flags
			if flags == nil {
				flags = []string{"--provider", "scripted", "--script", "script.yaml"}
			} else if flags[0] == "--config" {
				flags = append(flags, "--provider", "scripted", "--script", "script.yaml")
			}
			vcode, _, vstderr := runRootIn(t, dir, "", append([]string{"--agent", "agent.yaml", "validate"}, flags...)...)
			rcode, _, rstderr := runRootIn(t, dir, "", append(append([]string{"--agent", "agent.yaml", "run"}, flags...), "-p", "hi")...)
			vline, rline := lastLine(vstderr), lastLine(rstderr)
			if vcode != 2 || rcode != 2 || vline != rline || !strings.Contains(vline, tt.want) {
				t.Fatalf("validate: exit %d %q\nrun:      exit %d %q\nwant both exit 2 with %q", vcode, vline, rcode, rline, tt.want)
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
