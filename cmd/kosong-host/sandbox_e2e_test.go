package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/testbin"
)

// sandboxEnv gives the host a temp dir of its own (writable in every
// sandbox), apart from the test's folders.
func sandboxEnv(t *testing.T) []string {
	t.Helper()
	if sandbox.ABI() == 0 {
		t.Skip("this kernel has no Landlock: plugins cannot be sandboxed here")
	}
	return []string{"TMPDIR=" + t.TempDir()}
}

// The default agent's WriteFile writes in the work dir, and the sandbox
// refuses a write outside it even under --yolo, naming the sandbox.
func TestDefaultAgentWriteFileSandboxed(t *testing.T) {
	env := sandboxEnv(t)
	work, outside := t.TempDir(), t.TempDir()
	agentPath := filepath.Join(testbin.Root(), "agents", "default", "agent.yaml")
	call := func(path string) result {
		return runHostEnv(t, work, env, "", "--agent", agentPath, "tools", "call", "--yolo", "WriteFile",
			fmt.Sprintf(`{"path": %q, "content": "hi"}`, path))
	}
	if r := call("inside.txt"); r.code != 0 {
		t.Fatalf("WriteFile in the work dir: exit %d: %s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(work, "inside.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("inside.txt = %q, %v", b, err)
	}
	target := filepath.Join(outside, "x.txt")
	r := call(target)
	if r.code != 1 {
		t.Fatalf("WriteFile outside the sandbox: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"`" + target + "` is outside the sandbox of plugin file (writable: " + work, "network: none"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the refused write created the file")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the refused write left %d entries outside", len(entries))
	}
}

// A Shell command in a sandboxed shell plugin is refused the same write;
// the tool's error names the sandbox.
func TestShellSandboxed(t *testing.T) {
	env := sandboxEnv(t)
	outside := t.TempDir()
	dir := writeFiles(t, map[string]string{"s.md": "x", "agent.yaml": `version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools:
    - {plugin: shell, tools: [Shell], sandbox: {write: [$WORK_DIR], network: none}}
`})
	target := filepath.Join(outside, "y.txt")
	r := runHostEnv(t, dir, env, "", "tools", "call", "--yolo", "Shell",
		fmt.Sprintf(`{"command": "echo in > inside.txt && echo out > %s"}`, target))
	if r.code != 1 {
		t.Fatalf("Shell writing outside the sandbox: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"Permission denied", "the sandbox of plugin shell (writable: " + dir} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("output lacks %q: stdout %q, stderr %q", want, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the refused write created the file")
	}
	if _, err := os.Stat(filepath.Join(dir, "inside.txt")); err != nil {
		t.Errorf("the write in the work dir: %v", err)
	}
}

// sandbox-exec run by hand with bad rules fails in one line, exit 2.
func TestSandboxExecBadRules(t *testing.T) {
	for _, rules := range []string{"{", `{"plugin":"x","write":["rel"]}`} {
		r := runHost(t, t.TempDir(), "", "sandbox-exec", "--rules", rules, "--", "/bin/true")
		if r.code != 2 || !strings.Contains(r.stderr, "sandbox rules: ") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("rules %s: exit %d, stderr %q", rules, r.code, r.stderr)
		}
	}
}
