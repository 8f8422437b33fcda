package spec

import (
	"strings"
	"testing"
)

func TestTypoHints(t *testing.T) {
	const head = "version: 1\nagent:\n  name: a\n  system_prompt_path: ./s.md\n"
	tests := []struct {
		name, body, wantErr string
	}{
		{"exclude typo", "  tools: [file, \"think:Think\"]\n  exclude_tools: [Thnk]\n",
			`exclude_tools entry "Thnk" matches no tool or plugin of the agent (did you mean Think?)`},
		{"exclude plugin typo", "  tools: [file, \"think:Think\"]\n  exclude_tools: [\"thnik:Think\"]\n",
			`exclude_tools entry "thnik:Think" matches no tool or plugin of the agent (did you mean think?)`},
		{"allowed typo", "  tools: [\"shell:Shell\"]\n  allowed_tools: [\"shell:Shel\"]\n",
			`allowed_tools entry "shell:Shel": plugin shell has no tool Shel in tools (did you mean Shell?)`},
		{"exclude a listed tool", "  tools: [file, \"think:Think\"]\n  exclude_tools: [Think]\n", ""},
		{"exclude a tool of a whole plugin", "  tools: [file, \"think:Think\"]\n  exclude_tools: [Glob]\n", ""},
		{"exclude a tool named like its whole plugin", "  tools: [shell, \"think:Think\"]\n  exclude_tools: [Shell]\n", ""},
		{"exclude matching nothing close", "  tools: [\"think:Think\"]\n  exclude_tools: [Zzzzzz]\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := load(t, map[string]string{"agent.yaml": head + tt.body, "s.md": "x"}, "agent.yaml", LoadOptions{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}
