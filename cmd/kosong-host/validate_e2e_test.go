package main_test

import (
	"strings"
	"testing"
)

// TestValidateChecksWhatRunChecks: validate refuses what run refuses,
// without calling a model, and names the file, line or variable.
func TestValidateChecksWhatRunChecks(t *testing.T) {
	withSub := func(path string) string {
		return strings.Replace(echoAgent, "name: t", "name: t\n  subagents:\n    helper: {path: "+path+", description: helps}", 1)
	}
	subAgent := "version: 1\nagent:\n  name: sub\n  system_prompt_path: ./sub.md\n  tools: [\"echo:Echo\"]\n"
	tests := []struct {
		name  string
		files map[string]string
		want  []string // each on stderr
		// run: run refuses the agent at start too, with these arguments
		// (subagent files are read when the subagent is started).
		run []string
	}{
		{"missing system prompt file", map[string]string{"agent.yaml": echoAgent},
			[]string{"system prompt", "s.md", "no such file"}, []string{"--provider", "scripted", "--script", "script.yaml"}},
		{"undefined variable", map[string]string{"agent.yaml": echoAgent, "s.md": "line one\nHello ${WHO}.\n"},
			[]string{"s.md:2: system prompt variable ${WHO} is not defined"}, []string{"--provider", "scripted", "--script", "script.yaml"}},
		{"missing subagent file", map[string]string{"agent.yaml": withSub("./nope.yaml"), "s.md": "hi"},
			[]string{"subagent helper of ", "Agent spec file not found: ", "nope.yaml"}, nil},
		{"subagent's undefined variable", map[string]string{"agent.yaml": withSub("./sub.yaml"), "s.md": "hi",
			"sub.yaml": subAgent, "sub.md": "${NOPE}"},
			[]string{"subagent helper of ", "sub.md:1: system prompt variable ${NOPE}"}, nil},
		{"subagent's subagent file", map[string]string{"agent.yaml": withSub("./sub.yaml"), "s.md": "hi",
			"sub.yaml": strings.Replace(subAgent, "name: sub", "name: sub\n  subagents:\n    deeper: {path: ./gone.yaml, description: d}", 1), "sub.md": "ok"},
			[]string{"subagent deeper of ", "sub.yaml", "gone.yaml"}, nil},
		{"unknown model alias", map[string]string{"agent.yaml": strings.Replace(echoAgent, "name: t", "name: t\n  model: nosuch", 1), "s.md": "hi"},
			[]string{`model "nosuch" is not a model alias`}, []string{}},
		{"every problem at once", map[string]string{"agent.yaml": withSub("./nope.yaml"), "s.md": "${WHO}"},
			[]string{"error: ", "${WHO}", "nope.yaml"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.files["script.yaml"] = "turns:\n  - text: hi\n"
			dir := writeFiles(t, tt.files)
			r := runHost(t, dir, "", "validate")
			if r.code != 2 || !strings.HasPrefix(r.stderr, "error: ") || strings.Contains(r.stdout, "ok") {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q: %s", want, r.stderr)
				}
			}
			if tt.run == nil {
				return
			}
			// run refuses the same agent, for the same reason.
			r = runHost(t, dir, "", append(append([]string{"run"}, tt.run...), "-p", "hi")...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want[len(tt.want)-1]) {
				t.Errorf("run: exit %d: %s", r.code, r.stderr)
			}
		})
	}
}

// TestValidateMissingKeyIsAWarning: validate needs no key; a missing one is
// a warning, and the agent is ok.
func TestValidateMissingKeyIsAWarning(t *testing.T) {
	for _, model := range []string{"", "openai"} {
		agent := echoAgent
		if model != "" {
			agent = strings.Replace(echoAgent, "name: t", "name: t\n  model: "+model, 1)
		}
		dir := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi"})
		r := runHost(t, dir, "", "validate")
		if r.code != 0 || !strings.Contains(r.stdout, "ok: agent") || !strings.HasPrefix(r.stderr, "warning: ") || !strings.Contains(r.stderr, "OPENAI_API_KEY") {
			t.Errorf("model %q: exit %d\nstdout %s\nstderr %s", model, r.code, r.stdout, r.stderr)
		}
		r = runHostEnv(t, dir, []string{"OPENAI_API_KEY=x"}, "", "validate")
		if r.code != 0 || r.stderr != "" {
			t.Errorf("model %q with a key: exit %d stderr %q", model, r.code, r.stderr)
		}
	}
}
