package spec

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sandboxAgent(agentBlock, tools string) map[string]string {
	return map[string]string{
		"system.md":  "x",
		"agent.yaml": "version: 1\nagent:\n  name: a\n  system_prompt_path: ./system.md\n" + agentBlock + "  tools:\n" + tools,
	}
}

func TestSandboxParse(t *testing.T) {
	tests := []struct {
		name  string
		block string
		want  Sandbox // File, Line ignored
	}{
		{"empty: defaults", `{}`, Sandbox{NetworkAll: true}},
		{"paths", `{read: [/usr, ./lib], write: [$WORK_DIR, "$STATE_DIR/x", $TMPDIR, ~/.cache, "$HOME"]}`,
			Sandbox{Read: []string{"/usr", "$D/lib"}, Write: []string{"$WORK_DIR", "$STATE_DIR/x", "$TMPDIR", "~/.cache", "$HOME"}, NetworkAll: true}},
		{"network none", `{network: none, required: true}`, Sandbox{Required: true}},
		{"network all", `{network: all, required: false}`, Sandbox{NetworkAll: true}},
		{"ports sorted, unique", `{network: [443, 80, 443]}`, Sandbox{Ports: []uint16{80, 443}}},
		{"no ports", `{network: []}`, Sandbox{Ports: []uint16{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, dir, err := load(t, sandboxAgent("", "    - {plugin: echo, sandbox: "+tc.block+"}\n"), "agent.yaml", LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := *s.Tools[0].Sandbox
			if got.File != filepath.Join(dir, "agent.yaml") || got.Line != 6 {
				t.Errorf("located at %s:%d", got.File, got.Line)
			}
			got.File, got.Line = "", 0
			for i, p := range tc.want.Read {
				tc.want.Read[i] = strings.ReplaceAll(p, "$D", dir)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSandboxParseErrors(t *testing.T) {
	tests := []struct{ block, want string }{
		{`[/]`, "sandbox must be a mapping"},
		{`{writable: [/]}`, `unknown key "writable" in tools entry: sandbox (known keys: read, write, network, required)`},
		{`{write: /tmp}`, "sandbox: write must be a list"},
		{`{write: [""]}`, "sandbox: write: empty path"},
		{`{read: [$WORKDIR]}`, `sandbox: read: "$WORKDIR": unknown variable`},
		{`{network: some}`, "network must be none, all or a list of TCP ports, got some"},
		{`{network: [0]}`, "network: invalid port 0 (want 1-65535)"},
		{`{network: [http]}`, "network: invalid port http"},
		{`{network: [70000]}`, "invalid port 70000"},
		{`{required: yes}`, "required must be true or false, got yes"},
	}
	for _, tc := range tests {
		t.Run(tc.block, func(t *testing.T) {
			_, dir, err := load(t, sandboxAgent("", "    - {plugin: echo, sandbox: "+tc.block+"}\n"), "agent.yaml", LoadOptions{})
			if err == nil {
				t.Fatal("loaded")
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, filepath.Join(dir, "agent.yaml")+":6:") {
				t.Errorf("error %q, want %q at agent.yaml:6", msg, tc.want)
			}
		})
	}
}

func TestSandboxMerge(t *testing.T) {
	agentBlock := "  sandbox: {network: none}\n"
	s, _, err := load(t, sandboxAgent(agentBlock, "    - echo:Echo\n    - {plugin: echo, tools: [Echo2], sandbox: {network: [80]}}\n    - {plugin: echo, sandbox: {network: [80]}}\n    - think\n"),
		"agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refs, err := s.Plugins()
	if err != nil {
		t.Fatal(err)
	}
	if got := refs[0].Sandbox; got == nil || !reflect.DeepEqual(got.Ports, []uint16{80}) {
		t.Errorf("echo's sandbox = %+v, want its references' (port 80)", got)
	}
	if got := refs[1].Sandbox; got != s.Sandbox || got.NetworkAll {
		t.Errorf("think's sandbox = %+v, want the agent's", got)
	}

	s, _, err = load(t, sandboxAgent("", "    - {plugin: echo, tools: [A], sandbox: {network: none}}\n    - {plugin: echo, tools: [B], sandbox: {network: all}}\n"),
		"agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Plugins(); err == nil || !strings.Contains(err.Error(), `plugin "echo": sandbox conflicts with the reference at`) {
		t.Errorf("conflicting sandboxes: %v", err)
	}
}

func TestSandboxExtend(t *testing.T) {
	files := sandboxAgent("  sandbox: {network: none}\n", "    - echo\n")
	files["child.yaml"] = "version: 1\nagent:\n  extend: ./agent.yaml\n"
	files["open.yaml"] = "version: 1\nagent:\n  extend: ./agent.yaml\n  sandbox: {network: all}\n"
	for name, all := range map[string]bool{"child.yaml": false, "open.yaml": true} {
		s, _, err := load(t, files, name, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Sandbox == nil || s.Sandbox.NetworkAll != all {
			t.Errorf("%s: sandbox %+v, want network all=%v", name, s.Sandbox, all)
		}
	}
}
