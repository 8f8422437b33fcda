package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/spec"
)

func writeAgentFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRunPlugins: the plugins of the agent and of its subagents,
// recursively, each name once; one name for two binaries is an error naming
// both files.
func TestRunPlugins(t *testing.T) {
	dir := writeAgentFiles(t, map[string]string{
		"agent.yaml": "agent:\n  name: top\n  system_prompt_path: s.md\n  tools: [\"./bin/x:T\"]\n  subagents:\n    a: {path: a.yaml, description: a}\n    b: {path: b.yaml, description: b}\n",
		"a.yaml":     "agent:\n  name: a\n  system_prompt_path: s.md\n  tools: [\"./bin/x:T\", \"./bin/y:U\"]\n  subagents:\n    c: {path: c.yaml, description: c}\n",
		"b.yaml":     "agent:\n  name: b\n  system_prompt_path: s.md\n  tools: [\"./bin/y:U\"]\n  subagents:\n    top: {path: agent.yaml, description: loops back}\n",
		"c.yaml":     "agent:\n  name: c\n  system_prompt_path: s.md\n  tools: [\"./bin/z:V\"]\n",
		"clash.yaml": "agent:\n  name: clash\n  system_prompt_path: s.md\n  tools: [\"./bin/x:T\"]\n  subagents:\n    d: {path: d.yaml, description: d}\n",
		"d.yaml":     "agent:\n  name: d\n  system_prompt_path: s.md\n  tools: [\"./other/x:T\"]\n",
		"s.md":       "",
	})
	s, err := spec.Load(filepath.Join(dir, "agent.yaml"), spec.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := RunPlugins(s, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, p.Ref.Name+"@"+filepath.Base(p.AgentFile))
	}
	if strings.Join(names, " ") != "x@agent.yaml y@a.yaml z@c.yaml" {
		t.Fatalf("plugins %v", names)
	}
	s, err = spec.Load(filepath.Join(dir, "clash.yaml"), spec.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunPlugins(s, "", nil, nil)
	want := "plugin x is " + filepath.Join(dir, "bin/x") + " in " + filepath.Join(dir, "clash.yaml") + " but " + filepath.Join(dir, "other/x") + " in " + filepath.Join(dir, "d.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}
