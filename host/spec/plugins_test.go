package spec

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func loadTools(t *testing.T, tools string) (*Spec, string) {
	t.Helper()
	s, dir, err := load(t, map[string]string{
		"agent.yaml": "agent:\n  name: a\n  system_prompt_path: s.md\n  tools:\n" + tools,
	}, "agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// brief drops Refs for comparison.
func brief(ps []PluginRef) []PluginRef {
	out := make([]PluginRef, len(ps))
	for i, p := range ps {
		p.Refs = nil
		out[i] = p
	}
	return out
}

func TestPluginsGrouping(t *testing.T) {
	sum := strings.Repeat("a", 64)
	s, dir := loadTools(t, `    - echo:Echo
    - ./bin/shell:Shell
    - echo:Reverse
    - echo:Echo
    - bin/shell:Background
    - files
    - files:ReadFile
    - plugin: ./bin/shell
      sha256: `+sum+`
      timeout: 10s
      env: [HOME]
      tools: [Shell]
`)
	ps, err := s.Plugins()
	if err != nil {
		t.Fatal(err)
	}
	want := []PluginRef{
		{Name: "echo", Lookup: "echo", Tools: []string{"Echo", "Reverse"}},
		{Name: "shell", Path: filepath.Join(dir, "bin/shell"), Tools: []string{"Shell", "Background"},
			SHA256: sum, Timeout: 10 * time.Second, Env: []string{"HOME"}},
		{Name: "files", Lookup: "files"}, // all wins over ReadFile
	}
	if got := brief(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if n := []int{len(ps[0].Refs), len(ps[1].Refs), len(ps[2].Refs)}; !reflect.DeepEqual(n, []int{3, 3, 2}) {
		t.Errorf("refs per plugin = %v", n)
	}
	if !ps[2].Wants("Anything") || ps[0].Wants("Other") || !ps[0].Wants("Reverse") {
		t.Error("Wants is wrong")
	}
}

func TestPluginsExclude(t *testing.T) {
	s, _, err := load(t, map[string]string{"agent.yaml": `agent:
  name: a
  system_prompt_path: s.md
  tools: [files, "files:WriteFile", web]
  exclude_tools: [web:FetchURL, files:WriteFile, files:Glob]
`}, "agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.Plugins()
	if err != nil {
		t.Fatal(err)
	}
	want := []PluginRef{
		{Name: "files", Lookup: "files", Exclude: []string{"WriteFile", "Glob"}},
		{Name: "web", Lookup: "web", Exclude: []string{"FetchURL"}},
	}
	if got := brief(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if ps[0].Wants("Glob") || !ps[0].Wants("ReadFile") {
		t.Error("Wants ignores Exclude")
	}
}

func TestPluginsExcludeMerge(t *testing.T) {
	// Two all-tools references: a tool is left out only if both leave it out, and a tool
	// named by a third reference is back in.
	p := PluginRef{Name: "x", Lookup: "x", Refs: []ToolRef{
		{Lookup: "x", Exclude: []string{"A", "B", "C"}},
		{Lookup: "x", Exclude: []string{"C", "B"}},
		{Lookup: "x", Tools: []string{"C"}},
	}}
	if err := p.merge(); err != nil {
		t.Fatal(err)
	}
	if p.Tools != nil || !reflect.DeepEqual(p.Exclude, []string{"B"}) {
		t.Errorf("Tools %q Exclude %q", p.Tools, p.Exclude)
	}
}

func TestPluginsConfig(t *testing.T) {
	tests := []struct {
		name       string
		tools      string
		config     string
		toolConfig map[string]string
		tools2     []string
	}{
		{
			name:   "one mapping",
			tools:  "    - {plugin: p, tools: [A, B], config: {k: 1}}\n",
			config: `{"k":1}`,
			tools2: []string{"A", "B"},
		},
		{
			name:   "same config twice",
			tools:  "    - {plugin: p, tools: [A], config: {k: 1}}\n    - {plugin: p, tools: [B], config: {k: 1}}\n",
			config: `{"k":1}`,
			tools2: []string{"A", "B"},
		},
		{
			name:       "different configs per tool",
			tools:      "    - {plugin: p, tools: [A], config: {k: 1}}\n    - {plugin: p, tools: [B], config: {k: 2}}\n",
			toolConfig: map[string]string{"A": `{"k":1}`, "B": `{"k":2}`},
			tools2:     []string{"A", "B"},
		},
		{
			name:       "some tools without config",
			tools:      "    - {plugin: p, tools: [A], config: {k: 1}}\n    - p:B\n",
			toolConfig: map[string]string{"A": `{"k":1}`},
			tools2:     []string{"A", "B"},
		},
		{
			name:       "all-tools config and a tool override",
			tools:      "    - {plugin: p, config: {k: 1}}\n    - {plugin: p, tools: [A], config: {k: 2}}\n    - {plugin: p, tools: [B], config: {k: 1}}\n",
			config:     `{"k":1}`,
			toolConfig: map[string]string{"A": `{"k":2}`},
		},
		{
			name:   "key order does not matter",
			tools:  "    - {plugin: p, tools: [A], config: {a: 1, b: 2}}\n    - {plugin: p, tools: [A], config: {b: 2, a: 1}}\n",
			config: `{"a":1,"b":2}`,
			tools2: []string{"A"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := loadTools(t, tt.tools)
			ps, err := s.Plugins()
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 1 {
				t.Fatalf("%d plugins", len(ps))
			}
			p := ps[0]
			if string(p.Config) != tt.config {
				t.Errorf("Config = %s, want %s", p.Config, tt.config)
			}
			var tc map[string]string
			if p.ToolConfig != nil {
				tc = map[string]string{}
				for k, v := range p.ToolConfig {
					tc[k] = string(v)
				}
			}
			if !reflect.DeepEqual(tc, tt.toolConfig) {
				t.Errorf("ToolConfig = %v, want %v", tc, tt.toolConfig)
			}
			if !reflect.DeepEqual(p.Tools, tt.tools2) {
				t.Errorf("Tools = %q, want %q", p.Tools, tt.tools2)
			}
			for tool, want := range tt.toolConfig {
				if got := p.ConfigFor(tool); string(got) != want {
					t.Errorf("ConfigFor(%s) = %s", tool, got)
				}
			}
			if got := p.ConfigFor("Zzz"); !reflect.DeepEqual(got, json.RawMessage(nilIfEmpty(tt.config))) {
				t.Errorf("ConfigFor(other) = %s", got)
			}
		})
	}
}

func nilIfEmpty(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

func TestPluginsConflicts(t *testing.T) {
	sumA, sumB := strings.Repeat("a", 64), strings.Repeat("b", 64)
	tests := []struct {
		name  string
		tools string
		want  string
	}{
		{
			name:  "sha256",
			tools: "    - {plugin: p, sha256: " + sumA + "}\n    - p:X\n    - {plugin: p, sha256: " + sumB + "}\n",
			want:  `$D/agent.yaml:7: plugin "p": sha256 conflicts with the reference at $D/agent.yaml:5`,
		},
		{
			name:  "sha256 on the same path written differently",
			tools: "    - {plugin: ./bin/p, sha256: " + sumA + "}\n    - {plugin: bin/p, sha256: " + sumB + "}\n",
			want:  `$D/agent.yaml:6: plugin "p": sha256 conflicts with the reference at $D/agent.yaml:5`,
		},
		{
			name:  "timeout",
			tools: "    - {plugin: p, timeout: 1s}\n    - {plugin: p, timeout: 2s}\n",
			want:  `$D/agent.yaml:6: plugin "p": timeout conflicts`,
		},
		{
			name:  "env",
			tools: "    - {plugin: p, env: [A]}\n    - {plugin: p, env: [A, B]}\n",
			want:  `$D/agent.yaml:6: plugin "p": env conflicts`,
		},
		{
			name:  "config of all tools",
			tools: "    - {plugin: p, config: {k: 1}}\n    - {plugin: p, config: {k: 2}}\n",
			want:  `$D/agent.yaml:6: plugin "p": config conflicts`,
		},
		{
			name:  "config of one tool",
			tools: "    - {plugin: p, tools: [A, B], config: {k: 1}}\n    - {plugin: p, tools: [B], config: {k: 2}}\n",
			want:  `$D/agent.yaml:6: plugin "p": config of tool "B" conflicts with the reference at $D/agent.yaml:5`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := loadTools(t, tt.tools)
			_, err := s.Plugins()
			if err == nil {
				t.Fatal("no error")
			}
			want := strings.ReplaceAll(tt.want, "$D", dir)
			if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q\ndoes not contain %q", err, want)
			}
		})
	}
}

func TestPluginsNoConflictWhenUnset(t *testing.T) {
	sum := strings.Repeat("c", 64)
	s, _ := loadTools(t, "    - p:A\n    - {plugin: p, tools: [B], sha256: "+sum+", timeout: 5s, env: [X]}\n    - p:C\n    - {plugin: p, tools: [D], sha256: "+strings.ToUpper(sum)+"}\n")
	ps, err := s.Plugins()
	if err != nil {
		t.Fatal(err)
	}
	want := []PluginRef{{Name: "p", Lookup: "p", Tools: []string{"A", "B", "C", "D"}, SHA256: sum, Timeout: 5 * time.Second, Env: []string{"X"}}}
	if got := brief(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
