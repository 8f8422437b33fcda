package spec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// writeFiles writes files (relative name -> contents) under dir. A name ending in "/" is a
// directory.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func load(t *testing.T, files map[string]string, name string, opts LoadOptions) (*Spec, string, error) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	if opts.DefaultAgentPath != "" && !filepath.IsAbs(opts.DefaultAgentPath) {
		opts.DefaultAgentPath = filepath.Join(dir, opts.DefaultAgentPath)
	}
	s, err := Load(filepath.Join(dir, name), opts)
	return s, dir, err
}

const minimal = `version: 1
agent:
  name: a
  system_prompt_path: ./system.md
  tools: ["echo:Echo"]
`

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		load  string // file to load; default agent.yaml
		opts  LoadOptions
		want  []string // substrings; "$D" is replaced by the temp dir
	}{
		{
			name: "missing file",
			load: "nope.yaml",
			want: []string{"Agent spec file not found: $D/nope.yaml"},
		},
		{
			name:  "directory",
			files: map[string]string{"agent.yaml/": ""},
			want:  []string{"Agent spec path is not a file: $D/agent.yaml"},
		},
		{
			name:  "invalid yaml",
			files: map[string]string{"agent.yaml": "version: 1\nagent:\n  name: [a\n"},
			want:  []string{"Invalid YAML in agent spec file: $D/agent.yaml: yaml: line"},
		},
		{
			name:  "two documents",
			files: map[string]string{"agent.yaml": minimal + "---\nversion: 1\n"},
			want:  []string{"Invalid YAML in agent spec file: $D/agent.yaml: expected a single YAML document"},
		},
		{
			name:  "empty file",
			files: map[string]string{"agent.yaml": ""},
			want:  []string{"Invalid YAML format in agent spec file: $D/agent.yaml"},
		},
		{
			name:  "not a mapping",
			files: map[string]string{"agent.yaml": "- a\n- b\n"},
			want:  []string{"Invalid YAML format in agent spec file: $D/agent.yaml"},
		},
		{
			name:  "unknown top-level key",
			files: map[string]string{"agent.yaml": "version: 1\nagnet:\n  name: a\n"},
			want:  []string{`$D/agent.yaml:2: unknown key "agnet" in agent spec (known keys: version, agent)`},
		},
		{
			name:  "unknown key in agent",
			files: map[string]string{"agent.yaml": "agent:\n  name: a\n  toolz: []\n"},
			want:  []string{`$D/agent.yaml:3: unknown key "toolz" in agent`},
		},
		{
			name:  "duplicate key",
			files: map[string]string{"agent.yaml": "agent:\n  name: a\n  name: b\n"},
			want:  []string{`$D/agent.yaml:3: duplicate key "name" in agent`},
		},
		{
			name: "unknown key in tool mapping",
			files: map[string]string{"agent.yaml": `agent:
  name: a
  system_prompt_path: s.md
  tools:
    - plugin: echo
      sha: abc
`},
			want: []string{`$D/agent.yaml:6: unknown key "sha" in tools entry`},
		},
		{
			name:  "tool written as a mapping by mistake",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - echo: Echo\n"},
			want:  []string{`$D/agent.yaml:3: unknown key "echo" in tools entry`, `write "echo:Echo" without a space`},
		},
		{
			name:  "version 2",
			files: map[string]string{"agent.yaml": strings.Replace(minimal, "version: 1", "version: 2", 1)},
			want:  []string{"$D/agent.yaml:1: Unsupported agent spec version: 2"},
		},
		{
			name:  "version 1.0",
			files: map[string]string{"agent.yaml": strings.Replace(minimal, "version: 1", "version: 1.0", 1)},
			want:  []string{"Unsupported agent spec version: 1.0"},
		},
		{
			name:  "version null",
			files: map[string]string{"agent.yaml": strings.Replace(minimal, "version: 1", "version:", 1)},
			want:  []string{"Unsupported agent spec version: null"},
		},
		{
			name:  "agent not a mapping",
			files: map[string]string{"agent.yaml": "version: 1\nagent: [a]\n"},
			want:  []string{"$D/agent.yaml:2: agent must be a mapping, got a list"},
		},
		{
			name:  "extend default without default agent",
			files: map[string]string{"agent.yaml": "agent:\n  extend: default\n"},
			want:  []string{"$D/agent.yaml:2: extend: default: no default agent is configured"},
		},
		{
			name:  "extend missing file",
			files: map[string]string{"agent.yaml": "agent:\n  name: a\n  extend: ./base.yaml\n"},
			want:  []string{"$D/agent.yaml:3: Agent spec file not found: $D/base.yaml"},
		},
		{
			name:  "extend a directory",
			files: map[string]string{"agent.yaml": "agent:\n  extend: sub\n", "sub/": ""},
			want:  []string{"$D/agent.yaml:2: Agent spec path is not a file: $D/sub"},
		},
		{
			name: "error in base names the base",
			files: map[string]string{
				"agent.yaml":     "agent:\n  extend: base/base.yaml\n",
				"base/base.yaml": "agent:\n  nam: x\n",
			},
			want: []string{`$D/base/base.yaml:2: unknown key "nam" in agent`},
		},
		{
			name: "cycle a b a",
			files: map[string]string{
				"a.yaml": "agent:\n  extend: b.yaml\n",
				"b.yaml": "agent:\n  extend: ./a.yaml\n",
			},
			load: "a.yaml",
			want: []string{"agent spec extend cycle: $D/a.yaml -> $D/b.yaml -> $D/a.yaml"},
		},
		{
			name: "cycle not at the start",
			files: map[string]string{
				"a.yaml": "agent:\n  extend: b.yaml\n",
				"b.yaml": "agent:\n  extend: c.yaml\n",
				"c.yaml": "agent:\n  extend: b.yaml\n",
			},
			load: "a.yaml",
			want: []string{"agent spec extend cycle: $D/b.yaml -> $D/c.yaml -> $D/b.yaml"},
		},
		{
			name:  "self cycle",
			files: map[string]string{"a.yaml": "agent:\n  extend: a.yaml\n"},
			load:  "a.yaml",
			want:  []string{"agent spec extend cycle: $D/a.yaml -> $D/a.yaml"},
		},
		{
			name:  "cycle through default",
			files: map[string]string{"default.yaml": "agent:\n  extend: default\n"},
			load:  "default.yaml",
			opts:  LoadOptions{DefaultAgentPath: "default.yaml"},
			want:  []string{"agent spec extend cycle: $D/default.yaml -> $D/default.yaml"},
		},
		{
			name:  "name missing",
			files: map[string]string{"agent.yaml": "agent:\n  system_prompt_path: s.md\n  tools: [echo]\n"},
			want:  []string{"$D/agent.yaml: Agent name is required"},
		},
		{
			name:  "name empty",
			files: map[string]string{"agent.yaml": "agent:\n  name: ''\n  system_prompt_path: s.md\n  tools: [echo]\n"},
			want:  []string{"$D/agent.yaml: Agent name is required"},
		},
		{
			name:  "agent section missing",
			files: map[string]string{"agent.yaml": "version: 1\n"},
			want:  []string{"$D/agent.yaml: Agent name is required"},
		},
		{
			name:  "system prompt path missing",
			files: map[string]string{"agent.yaml": "agent:\n  name: a\n  tools: [echo]\n"},
			want:  []string{"$D/agent.yaml: System prompt path is required"},
		},
		{
			name:  "system prompt path empty",
			files: map[string]string{"agent.yaml": "agent:\n  name: a\n  system_prompt_path: ''\n"},
			want:  []string{"$D/agent.yaml:3: system_prompt_path must not be empty"},
		},
		{
			name:  "tools missing",
			files: map[string]string{"agent.yaml": "agent:\n  name: a\n  system_prompt_path: s.md\n  allowed_tools: [echo]\n"},
			want:  []string{"$D/agent.yaml: Tools are required"},
		},
		{
			name:  "tools not a list",
			files: map[string]string{"agent.yaml": "agent:\n  tools: echo\n"},
			want:  []string{"$D/agent.yaml:2: tools must be a list, got a scalar"},
		},
		{
			name:  "name not a string",
			files: map[string]string{"agent.yaml": "agent:\n  name: [a]\n"},
			want:  []string{"$D/agent.yaml:2: name must be a string, got a list"},
		},
		{
			name:  "system_prompt_args value not a string",
			files: map[string]string{"agent.yaml": "agent:\n  system_prompt_args:\n    x: {a: 1}\n"},
			want:  []string{"$D/agent.yaml:3: system_prompt_args.x must be a string, got a mapping"},
		},
		{
			name:  "empty tool name",
			files: map[string]string{"agent.yaml": "agent:\n  tools: ['echo:']\n"},
			want:  []string{`$D/agent.yaml:2: tools entry "echo:": invalid tool name ""`},
		},
		{
			name:  "empty plugin",
			files: map[string]string{"agent.yaml": "agent:\n  tools: [':Echo']\n"},
			want:  []string{`$D/agent.yaml:2: tools entry ":Echo": empty plugin`},
		},
		{
			name:  "bad plugin name",
			files: map[string]string{"agent.yaml": "agent:\n  allowed_tools: ['ec ho:Echo']\n"},
			want:  []string{`$D/agent.yaml:2: allowed_tools entry "ec ho:Echo": invalid plugin name "ec ho"`},
		},
		{
			name:  "bad tool name",
			files: map[string]string{"agent.yaml": "agent:\n  tools: ['echo:Ec.ho']\n"},
			want:  []string{`invalid tool name "Ec.ho"`},
		},
		{
			name:  "null tool entry",
			files: map[string]string{"agent.yaml": "agent:\n  tools: [~]\n"},
			want:  []string{`$D/agent.yaml:2: tools entry must be a string or a mapping, got null`},
		},
		{
			name:  "mapping without plugin",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - tools: [Echo]\n"},
			want:  []string{"$D/agent.yaml:3: tools entry: plugin or remote is required"},
		},
		{
			name:  "mapping with empty tools",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      tools: []\n"},
			want:  []string{"$D/agent.yaml:4: tools entry: tools must not be empty (omit it for every tool)"},
		},
		{
			name:  "mapping with bad tool",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      tools: [Echo, 'a b']\n"},
			want:  []string{`$D/agent.yaml:4: tools entry "echo:Echo,a b": invalid tool name "a b"`},
		},
		{
			name:  "bad sha256",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      sha256: abc123\n"},
			want:  []string{`$D/agent.yaml:4: tools entry: invalid sha256 "abc123" (want 64 hex digits)`},
		},
		{
			name:  "sha256 not hex",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      sha256: " + strings.Repeat("g", 64) + "\n"},
			want:  []string{"invalid sha256"},
		},
		{
			name:  "bad timeout",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      timeout: soon\n"},
			want:  []string{`$D/agent.yaml:4: tools entry: invalid timeout "soon" (want a positive duration like "30s")`},
		},
		{
			name:  "timeout without unit",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      timeout: 30\n"},
			want:  []string{`invalid timeout "30"`},
		},
		{
			name:  "negative timeout",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      timeout: -1s\n"},
			want:  []string{`invalid timeout "-1s"`},
		},
		{
			name:  "zero timeout",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      timeout: 0s\n"},
			want:  []string{`invalid timeout "0s"`},
		},
		{
			name:  "bad env name",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      env: [HOME, 1BAD]\n"},
			want:  []string{`$D/agent.yaml:4: tools entry: invalid environment variable name "1BAD"`},
		},
		{
			name:  "env not a list",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      env: HOME\n"},
			want:  []string{`$D/agent.yaml:4: tools entry: env must be a list, got a scalar`},
		},
		{
			name:  "config not a mapping",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      config: [1]\n"},
			want:  []string{`$D/agent.yaml:4: tools entry: config must be a mapping, got a list`},
		},
		{
			name:  "config not JSON",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      config: {x: .inf}\n"},
			want:  []string{`$D/agent.yaml:4: tools entry: config: +Inf cannot be represented in JSON`},
		},
		{
			name:  "config with non-string key",
			files: map[string]string{"agent.yaml": "agent:\n  tools:\n    - plugin: echo\n      config: {a: {1: x}}\n"},
			want:  []string{`config: key 1 is not a string`},
		},
		{
			name:  "exclude entry bad",
			files: map[string]string{"agent.yaml": "agent:\n  exclude_tools: ['a b']\n"},
			want:  []string{`$D/agent.yaml:2: exclude_tools entry "a b" is neither a tool nor a plugin name`},
		},
		{
			name:  "subagent without path",
			files: map[string]string{"agent.yaml": "agent:\n  subagents:\n    coder:\n      description: d\n"},
			want:  []string{`$D/agent.yaml:3: subagent "coder": path is required`},
		},
		{
			name:  "subagent without description",
			files: map[string]string{"agent.yaml": "agent:\n  subagents:\n    coder:\n      path: c.yaml\n"},
			want:  []string{`$D/agent.yaml:3: subagent "coder": description is required`},
		},
		{
			name:  "subagent unknown key",
			files: map[string]string{"agent.yaml": "agent:\n  subagents:\n    coder:\n      path: c.yaml\n      desc: d\n"},
			want:  []string{`$D/agent.yaml:5: unknown key "desc" in subagent "coder" (known keys: path, description)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.load
			if name == "" {
				name = "agent.yaml"
			}
			s, dir, err := load(t, tt.files, name, tt.opts)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", s)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Errorf("error is %T, want *Error", err)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tt.want {
				w = strings.ReplaceAll(w, "$D", dir)
				if !strings.Contains(msg, w) {
					t.Errorf("error %q\ndoes not contain %q", msg, w)
				}
			}
		})
	}
}

func TestLoadMinimal(t *testing.T) {
	for _, version := range []string{"version: 1\n", "version: '1'\n", ""} {
		body := version + strings.TrimPrefix(minimal, "version: 1\n")
		s, dir, err := load(t, map[string]string{"agent.yaml": body}, "agent.yaml", LoadOptions{})
		if err != nil {
			t.Fatalf("%q: %v", version, err)
		}
		want := &Spec{
			Path:             filepath.Join(dir, "agent.yaml"),
			Files:            []string{filepath.Join(dir, "agent.yaml")},
			Name:             "a",
			SystemPromptPath: filepath.Join(dir, "system.md"),
			SystemPromptArgs: map[string]string{},
			Tools: []ToolRef{{
				Text: "echo:Echo", Plugin: "echo", Lookup: "echo", Tools: []string{"Echo"},
				File: filepath.Join(dir, "agent.yaml"), Line: strings.Count(version, "\n") + 4,
			}},
			Subagents:  map[string]Subagent{},
			MCPServers: []MCPServer{},
		}
		if !reflect.DeepEqual(s, want) {
			t.Errorf("%q:\n got %+v\nwant %+v", version, s, want)
		}
	}
}

func TestLoadRelativePath(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"agent.yaml": minimal})
	t.Chdir(dir)
	s, err := Load("agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Path != filepath.Join(dir, "agent.yaml") || s.SystemPromptPath != filepath.Join(dir, "system.md") {
		t.Errorf("paths not absolute: %q %q", s.Path, s.SystemPromptPath)
	}
}

func TestNullListsAreEmpty(t *testing.T) {
	// As in Kimi: `tools:` with no value is set (to nothing), not inherited.
	s, _, err := load(t, map[string]string{"agent.yaml": `agent:
  name: a
  system_prompt_path: s.md
  tools:
  exclude_tools:
  subagents:
  extend:
`}, "agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 0 || len(s.Subagents) != 0 || len(s.Files) != 1 {
		t.Errorf("got %+v", s)
	}
}

func TestExtendRelative(t *testing.T) {
	s, dir, err := load(t, map[string]string{
		"agents/coder/agent.yaml": `version: 1
agent:
  extend: ../base/agent.yaml
  name: coder
`,
		"agents/base/agent.yaml": `version: 1
agent:
  name: base
  system_prompt_path: prompts/system.md
  tools: [./bin/shell:Shell]
  model: fast
`,
	}, "agents/coder/agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "agents/base")
	if s.Name != "coder" || s.Model != "fast" {
		t.Errorf("name/model = %q/%q", s.Name, s.Model)
	}
	// Paths stay relative to the file that declared them.
	if s.SystemPromptPath != filepath.Join(base, "prompts/system.md") {
		t.Errorf("SystemPromptPath = %q", s.SystemPromptPath)
	}
	if len(s.Tools) != 1 || s.Tools[0].Path != filepath.Join(base, "bin/shell") || s.Tools[0].File != filepath.Join(base, "agent.yaml") {
		t.Errorf("Tools = %+v", s.Tools)
	}
	wantFiles := []string{filepath.Join(dir, "agents/coder/agent.yaml"), filepath.Join(base, "agent.yaml")}
	if !reflect.DeepEqual(s.Files, wantFiles) {
		t.Errorf("Files = %q", s.Files)
	}
}

func TestExtendDefault(t *testing.T) {
	s, dir, err := load(t, map[string]string{
		"agent.yaml": "agent:\n  extend: default\n  system_prompt_args: {ROLE: reviewer}\n",
		"builtin/default/agent.yaml": `agent:
  name: default
  system_prompt_path: system.md
  system_prompt_args: {ROLE: coder, TONE: terse}
  tools: [core]
`,
		// A file literally named "default" is reached with ./default.
		"default": "agent:\n  name: not-this\n",
	}, "agent.yaml", LoadOptions{DefaultAgentPath: "builtin/default/agent.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "default" || s.SystemPromptPath != filepath.Join(dir, "builtin/default/system.md") {
		t.Errorf("got %+v", s)
	}
	if want := map[string]string{"ROLE": "reviewer", "TONE": "terse"}; !reflect.DeepEqual(s.SystemPromptArgs, want) {
		t.Errorf("SystemPromptArgs = %v", s.SystemPromptArgs)
	}
}

func TestExtendChain(t *testing.T) {
	s, dir, err := load(t, map[string]string{
		"c.yaml": `agent:
  name: c
  system_prompt_path: c.md
  system_prompt_args: {A: c, B: c, C: c}
  tools: [c]
  exclude_tools: [X]
  subagents:
    helper: {path: helper.yaml, description: from c}
  model: c-model
`,
		"sub/b.yaml": `agent:
  extend: ../c.yaml
  system_prompt_path: b.md
  system_prompt_args: {B: b}
  tools: [b]
  allowed_tools: [b:One]
  exclude_tools: []
`,
		"a.yaml": `agent:
  extend: sub/b.yaml
  name: a
  system_prompt_args: {A: a}
  subagents: {}
`,
	}, "a.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "a" {
		t.Errorf("Name = %q", s.Name)
	}
	if s.SystemPromptPath != filepath.Join(dir, "sub/b.md") {
		t.Errorf("SystemPromptPath = %q", s.SystemPromptPath)
	}
	if want := map[string]string{"A": "a", "B": "b", "C": "c"}; !reflect.DeepEqual(s.SystemPromptArgs, want) {
		t.Errorf("SystemPromptArgs = %v", s.SystemPromptArgs)
	}
	// allowed_tools from b replaces tools; b's empty exclude_tools replaces c's.
	if len(s.Tools) != 1 || s.Tools[0].Text != "b:One" {
		t.Errorf("Tools = %+v", s.Tools)
	}
	// a's empty subagents replaces c's.
	if len(s.Subagents) != 0 {
		t.Errorf("Subagents = %v", s.Subagents)
	}
	if s.Model != "c-model" {
		t.Errorf("Model = %q", s.Model)
	}
	if len(s.Files) != 3 {
		t.Errorf("Files = %q", s.Files)
	}
}

func TestSubagents(t *testing.T) {
	s, dir, err := load(t, map[string]string{
		"agents/main.yaml": minimal + `  subagents:
    coder:
      path: ./coder.yaml
      description: writes code
    explore: {path: ../explore/agent.yaml, description: "reads code"}
    abs: {path: /opt/agents/x.yaml, description: ""}
`,
	}, "agents/main.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Subagent{
		"coder":   {Path: filepath.Join(dir, "agents/coder.yaml"), Description: "writes code"},
		"explore": {Path: filepath.Join(dir, "explore/agent.yaml"), Description: "reads code"},
		"abs":     {Path: "/opt/agents/x.yaml"},
	}
	if !reflect.DeepEqual(s.Subagents, want) {
		t.Errorf("Subagents = %+v", s.Subagents)
	}
}

func TestToolRefs(t *testing.T) {
	sum := strings.Repeat("AB", 32)
	s, dir, err := load(t, map[string]string{
		"agents/agent.yaml": `agent:
  name: a
  system_prompt_path: s.md
  tools:
    - echo:Echo
    - echo
    - ./bin/x:Tool
    - ../bin/y
    - /opt/z:Z
    - &full
      plugin: ./plugins/search
      tools: [SearchWeb, FetchURL, SearchWeb]
      sha256: ` + sum + `
      config:
        engine: brave
        limits: {max: 5, ratio: 0.5}
        tags: [a, b]
        on: true
        none: null
      timeout: 1m30s
      env: [BRAVE_API_KEY, HOME, BRAVE_API_KEY]
    - *full
`,
	}, "agents/agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "agents/agent.yaml")
	want := []ToolRef{
		{Text: "echo:Echo", Plugin: "echo", Lookup: "echo", Tools: []string{"Echo"}, File: file, Line: 5},
		{Text: "echo", Plugin: "echo", Lookup: "echo", File: file, Line: 6},
		{Text: "./bin/x:Tool", Plugin: "./bin/x", Path: filepath.Join(dir, "agents/bin/x"), Tools: []string{"Tool"}, File: file, Line: 7},
		{Text: "../bin/y", Plugin: "../bin/y", Path: filepath.Join(dir, "bin/y"), File: file, Line: 8},
		{Text: "/opt/z:Z", Plugin: "/opt/z", Path: "/opt/z", Tools: []string{"Z"}, File: file, Line: 9},
		{
			Text: "./plugins/search:SearchWeb,FetchURL,SearchWeb", Plugin: "./plugins/search",
			Path:    filepath.Join(dir, "agents/plugins/search"),
			Tools:   []string{"SearchWeb", "FetchURL"},
			SHA256:  strings.ToLower(sum),
			Config:  json.RawMessage(`{"engine":"brave","limits":{"max":5,"ratio":0.5},"none":null,"on":true,"tags":["a","b"]}`),
			Timeout: 90 * time.Second,
			Env:     []string{"BRAVE_API_KEY", "HOME"},
			File:    file, Line: 10,
		},
	}
	want = append(want, want[5]) // the alias
	if !reflect.DeepEqual(s.Tools, want) {
		for i := range max(len(s.Tools), len(want)) {
			var g, w ToolRef
			if i < len(s.Tools) {
				g = s.Tools[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("Tools[%d]:\n got %+v (config %s)\nwant %+v (config %s)", i, g, g.Config, w, w.Config)
			}
		}
	}
	if n := s.Tools[3].Name(); n != "y" {
		t.Errorf("Name() = %q", n)
	}
	if n := s.Tools[0].Name(); n != "echo" {
		t.Errorf("Name() = %q", n)
	}
}

func TestSplitRef(t *testing.T) {
	tests := []struct {
		in, plugin, tool string
		has              bool
	}{
		{"echo:Echo", "echo", "Echo", true},
		{"echo", "echo", "", false},
		{"./bin/x:Tool", "./bin/x", "Tool", true},
		{"./a:b/c", "./a:b/c", "", false},
		{"./a:b/c:T", "./a:b/c", "T", true},
		{"echo:", "echo", "", true},
	}
	for _, tt := range tests {
		p, tool, has := splitRef(tt.in)
		if p != tt.plugin || tool != tt.tool || has != tt.has {
			t.Errorf("splitRef(%q) = %q, %q, %v", tt.in, p, tool, has)
		}
	}
}

func toolsSummary(refs []ToolRef) []string {
	var out []string
	for _, r := range refs {
		s := r.Text
		if r.Tools != nil {
			s += " " + strings.Join(r.Tools, ",")
		} else {
			s += " *"
		}
		if r.Exclude != nil {
			s += " -" + strings.Join(r.Exclude, ",")
		}
		out = append(out, s)
	}
	return out
}

func TestAllowedAndExcludeTools(t *testing.T) {
	const tools = `  tools:
    - shell:Shell
    - shell:Background
    - files
    - plugin: web
      tools: [SearchWeb, FetchURL]
    - ./bin/todo:SetTodoList
    - ./bin/misc
`
	tests := []struct {
		name  string
		extra string
		want  []string
	}{
		{"nothing", "", []string{"shell:Shell Shell", "shell:Background Background", "files *",
			"web:SearchWeb,FetchURL SearchWeb,FetchURL", "./bin/todo:SetTodoList SetTodoList", "./bin/misc *"}},
		{"allowed replaces tools", "  allowed_tools: [shell:Shell, web]\n", []string{"shell:Shell Shell", "web *"}},
		{"allowed empty", "  allowed_tools: []\n", nil},
		{"exclude exact ref", "  exclude_tools: [shell:Shell]\n", []string{"shell:Background Background", "files *",
			"web:SearchWeb,FetchURL SearchWeb,FetchURL", "./bin/todo:SetTodoList SetTodoList", "./bin/misc *"}},
		{"exclude bare tool name", "  exclude_tools: [Shell, FetchURL, WriteFile]\n", []string{"shell:Background Background", "files * -Shell,FetchURL,WriteFile",
			"web:SearchWeb,FetchURL SearchWeb", "./bin/todo:SetTodoList SetTodoList", "./bin/misc * -Shell,FetchURL,WriteFile"}},
		// A bare word is also a tool name: harmless for tools that do not exist.
		{"exclude whole plugin by name", "  exclude_tools: [shell, web]\n", []string{"files * -shell,web", "./bin/todo:SetTodoList SetTodoList", "./bin/misc * -shell,web"}},
		{"exclude qualified tool of all-tools ref", "  exclude_tools: [files:WriteFile, files:WriteFile]\n", []string{"shell:Shell Shell", "shell:Background Background", "files * -WriteFile",
			"web:SearchWeb,FetchURL SearchWeb,FetchURL", "./bin/todo:SetTodoList SetTodoList", "./bin/misc *"}},
		{"exclude one tool of a mapping", "  exclude_tools: [web:SearchWeb]\n", []string{"shell:Shell Shell", "shell:Background Background", "files *",
			"web:SearchWeb,FetchURL FetchURL", "./bin/todo:SetTodoList SetTodoList", "./bin/misc *"}},
		{"exclude every tool of a mapping", "  exclude_tools: [web:SearchWeb, web:FetchURL]\n", []string{"shell:Shell Shell", "shell:Background Background", "files *",
			"./bin/todo:SetTodoList SetTodoList", "./bin/misc *"}},
		{"exclude by path", "  exclude_tools: [bin/todo:SetTodoList, ./bin/../bin/misc]\n", []string{"shell:Shell Shell", "shell:Background Background", "files *",
			"web:SearchWeb,FetchURL SearchWeb,FetchURL"}},
		{"exclude qualified tool of another plugin does nothing", "  exclude_tools: [other:Shell]\n", []string{"shell:Shell Shell", "shell:Background Background", "files *",
			"web:SearchWeb,FetchURL SearchWeb,FetchURL", "./bin/todo:SetTodoList SetTodoList", "./bin/misc *"}},
		{"exclude applies to allowed", "  allowed_tools: [shell, files]\n  exclude_tools: [Shell]\n", []string{"shell * -Shell", "files * -Shell"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := "agent:\n  name: a\n  system_prompt_path: s.md\n" + tools + tt.extra
			s, _, err := load(t, map[string]string{"agent.yaml": body}, "agent.yaml", LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := toolsSummary(s.Tools); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestExcludeInheritedPathsResolvePerFile(t *testing.T) {
	// The child excludes the base's ./bin/todo with a path relative to itself.
	s, _, err := load(t, map[string]string{
		"base/agent.yaml": "agent:\n  name: a\n  system_prompt_path: s.md\n  tools: [./bin/todo, shell]\n",
		"explore.yaml":    "agent:\n  extend: base/agent.yaml\n  exclude_tools: [base/bin/todo:SetTodoList]\n",
	}, "explore.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolsSummary(s.Tools), []string{"./bin/todo * -SetTodoList", "shell *"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLoadDoesNotShareState(t *testing.T) {
	// Excluding in one load must not leak into the base's refs (shared slices).
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"base.yaml":  "agent:\n  name: a\n  system_prompt_path: s.md\n  tools: [{plugin: web, tools: [A, B]}]\n",
		"child.yaml": "agent:\n  extend: base.yaml\n  exclude_tools: [A]\n",
	})
	c, err := Load(filepath.Join(dir, "child.yaml"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(filepath.Join(dir, "base.yaml"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolsSummary(c.Tools); !reflect.DeepEqual(got, []string{"web:A,B B"}) {
		t.Errorf("child %q", got)
	}
	if got := toolsSummary(b.Tools); !reflect.DeepEqual(got, []string{"web:A,B A,B"}) {
		t.Errorf("base %q", got)
	}
}

func TestSymlinkCycle(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.yaml": "agent:\n  extend: link.yaml\n"})
	if err := os.Symlink(filepath.Join(dir, "a.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Skip(err)
	}
	_, err := Load(filepath.Join(dir, "a.yaml"), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "agent spec extend cycle: ") {
		t.Fatalf("err = %v", err)
	}
}
