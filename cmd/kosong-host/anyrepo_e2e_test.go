package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// emptyEnv is an environment with nothing of the user's: state, config and
// cache folders of the test's own.
func emptyEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_STATE_HOME=" + filepath.Join(home, "state")}
}

// TestEmptyFolder: with nothing but the binary, in an empty folder, `tools
// list` and `run` use the built-in default agent and its built-in plugins.
func TestEmptyFolder(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	r := runHostEnv(t, dir, env, "", "tools", "list")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "agent kosong from built-in default\n") {
		t.Fatalf("tools list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, tool := range []string{"Shell", "ReadFile", "WriteFile", "Glob", "Grep", "SetTodoList", "Think"} {
		if !hasRow(r.stdout, tool, "loaded") {
			t.Errorf("tools list lacks %s:\n%s", tool, r.stdout)
		}
	}
	script := filepath.Join(t.TempDir(), "script.yaml")
	writeScript(t, script, `turns:
  - tool_calls:
      - {id: c1, name: Shell, arguments: {command: "echo made > out.txt"}}
      - {id: c2, name: Glob, arguments: {pattern: "*"}}
  - text: "done"
`)
	r = runHostEnv(t, dir, env, "", "run", "--provider", "scripted", "--script", script, "--yolo", "-p", "go")
	if r.code != 0 || !strings.Contains(r.stdout, "done") {
		t.Fatalf("run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("out.txt: %q %v", b, err)
	}
}

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAgentLookup: ./.kosong/agent.yaml, ./agent.yaml, the user's config
// folder, then the built-in default; `init` writes the first of them.
func TestAgentLookup(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	home := strings.TrimPrefix(env[0], "HOME=")
	cfgAgent := filepath.Join(home, "config", "kosong-host", "agent.yaml")
	if err := os.MkdirAll(filepath.Dir(cfgAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	writeScript(t, cfgAgent, "version: 1\nagent:\n  extend: default\n  name: mine\n")
	first := func() string {
		t.Helper()
		r := runHostEnv(t, dir, env, "", "tools", "list")
		if r.code != 0 {
			t.Fatalf("tools list: exit %d: %s", r.code, r.stderr)
		}
		line, _, _ := strings.Cut(r.stdout, "\n")
		return line
	}
	if got := first(); got != "agent mine from "+cfgAgent {
		t.Fatalf("first line %q", got)
	}
	writeScript(t, filepath.Join(dir, "agent.yaml"), "version: 1\nagent:\n  extend: default\n  name: here\n")
	if got := first(); got != "agent here from agent.yaml" {
		t.Fatalf("first line %q", got)
	}
	r := runHostEnv(t, dir, env, "", "init")
	if r.code != 0 || !strings.Contains(r.stdout, "wrote .kosong/agent.yaml") {
		t.Fatalf("init: %+v", r)
	}
	if got := first(); got != "agent kosong from .kosong/agent.yaml" {
		t.Fatalf("first line %q", got)
	}
	if r := runHostEnv(t, dir, env, "", "init"); r.code != 2 || !strings.Contains(r.stderr, "already exists") {
		t.Fatalf("second init: %+v", r)
	}
	r = runHostEnv(t, dir, env, "", "--agent", "nope.yaml", "tools", "list")
	if r.code != 2 || !strings.Contains(r.stderr, "Agent spec file not found: nope.yaml (given with --agent; without --agent kosong-host uses the first of ./.kosong/agent.yaml, ./agent.yaml, "+cfgAgent+", the built-in default agent)") {
		t.Fatalf("explicit missing: %+v", r)
	}
}

// TestRunBannerNamesAgent: an interactive run's start output names the
// spec in use.
func TestRunBannerNamesAgent(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, "turns:\n  - text: hello\n")
	r := runHostEnv(t, dir, env, "hi\n", "run", "-i", "--provider", "scripted", "--script", script)
	if r.code != 0 || !strings.Contains(r.stderr, "agent kosong from built-in default") {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	_ = testbin.Root
}

// TestGoInstall: `go install .../cmd/kosong-host` gives a complete tool:
// the installed binary alone runs the built-in default agent in an empty
// folder.
func TestGoInstall(t *testing.T) {
	gobin := t.TempDir()
	cmd := exec.Command("go", "install", "./cmd/kosong-host")
	cmd.Dir = testbin.Root()
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	entries, _ := os.ReadDir(gobin)
	if len(entries) != 1 {
		t.Fatalf("GOBIN holds %d files, want kosong-host alone", len(entries))
	}
	r := runCommand(t, filepath.Join(gobin, "kosong-host"), t.TempDir(), emptyEnv(t), "", "tools", "list")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "agent kosong from built-in default\n") || !hasRow(r.stdout, "Shell", "builtin shell") {
		t.Fatalf("installed tools list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
