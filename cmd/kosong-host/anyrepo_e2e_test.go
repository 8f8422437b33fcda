package main_test

import (
	"encoding/json"
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
// folder, then the built-in default; `init` writes the first of them. The
// folder's own files are used once it is trusted (see trust_e2e_test.go).
// runHostEnv trusts the folder with --trust; recorded by `kosong-host
// trust`, the lookup is the same.
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
	// Untrusted, the folder's agent gives way to the user's own.
	r := runUntrusted(t, dir, env, "", "tools", "list")
	if line, _, _ := strings.Cut(r.stdout, "\n"); r.code != 0 || line != "agent mine from "+cfgAgent ||
		!strings.Contains(r.stderr, "ignoring ./agent.yaml: this folder is not trusted (using "+cfgAgent+")") {
		t.Fatalf("untrusted: exit %d, first line %q\n%s", r.code, line, r.stderr)
	}
	r = runHostEnv(t, dir, env, "", "init")
	if r.code != 0 || !strings.Contains(r.stdout, "wrote .kosong/agent.yaml") {
		t.Fatalf("init: %+v", r)
	}
	if got := first(); got != "agent kosong from .kosong/agent.yaml" {
		t.Fatalf("first line %q", got)
	}
	if r := runHostEnv(t, dir, env, "", "trust"); r.code != 0 {
		t.Fatalf("trust: %+v", r)
	}
	r = runUntrusted(t, dir, env, "", "tools", "list")
	if line, _, _ := strings.Cut(r.stdout, "\n"); r.code != 0 || line != "agent kosong from .kosong/agent.yaml" {
		t.Fatalf("trusted folder: exit %d, first line %q\n%s", r.code, line, r.stderr)
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

// TestSessionsPerWorkDir: sessions record their folder and agent; -c
// continues the newest of this folder; `sessions` lists this folder's,
// --all every folder's; a resumed interactive run shows the last exchange,
// and leaving says how to resume.
func TestSessionsPerWorkDir(t *testing.T) {
	env := emptyEnv(t)
	a, b := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, "turns:\n  - text: answer one\n  - text: answer two\n")
	run := func(dir, stdin string, args ...string) result {
		t.Helper()
		return runHostEnv(t, dir, env, stdin, append([]string{"run", "--provider", "scripted", "--script", script}, args...)...)
	}
	if r := run(a, "", "-p", "question in a"); r.code != 0 {
		t.Fatalf("run in a: %+v", r)
	}
	if r := run(b, "", "-p", "question in b"); r.code != 0 {
		t.Fatalf("run in b: %+v", r)
	}
	r := runHostEnv(t, a, env, "", "sessions")
	if r.code != 0 || !strings.Contains(r.stdout, "question in a") || strings.Contains(r.stdout, "question in b") ||
		!strings.Contains(r.stdout, a) || !strings.Contains(r.stdout, "kosong") {
		t.Fatalf("sessions in a: %+v", r)
	}
	r = runHostEnv(t, a, env, "", "sessions", "--all")
	if r.code != 0 || !strings.Contains(r.stdout, "question in a") || !strings.Contains(r.stdout, "question in b") {
		t.Fatalf("sessions --all: %+v", r)
	}
	// The scripted model replays its turns from the start in each run, so
	// the resumed run answers "answer one" again; the recap shows the
	// saved exchange of a.
	r = run(a, "next\n", "-i", "-c")
	if r.code != 0 || !strings.Contains(r.stdout, "last exchange:\n  you: question in a\n  agent: answer one") ||
		!strings.Contains(r.stderr, "to resume this session: kosong-host run --resume ") {
		t.Fatalf("run -c in a: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runHostEnv(t, a, env, "", "sessions", "--json")
	var rows []struct {
		ID, WorkDir, Agent, FirstPrompt string
	}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(strings.ReplaceAll(r.stdout, "work_dir", "WorkDir"), "first_prompt", "FirstPrompt")), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("sessions --json (a's one session, continued): %v\n%s", err, r.stdout)
	}
	if rows[0].WorkDir != a || rows[0].FirstPrompt != "question in a" || rows[0].Agent != "kosong" {
		t.Fatalf("row %+v", rows[0])
	}
	// The id as a separate word, and a bad pick outside a terminal.
	if r := run(a, "", "--resume", rows[0].ID, "-p", "again"); r.code != 0 {
		t.Fatalf("--resume ID: %+v", r)
	}
	if r := run(a, "", "--resume", "-p", "x"); r.code != 2 || !strings.Contains(r.stderr, "--resume without an id asks which session in a terminal") {
		t.Fatalf("--resume without id, no terminal: %+v", r)
	}
	if r := run(t.TempDir(), "", "-c", "-p", "x"); r.code != 2 || !strings.Contains(r.stderr, "there is no session of") {
		t.Fatalf("-c in a new folder: %+v", r)
	}
	if r := run(a, "", "-c", "--resume", "last", "-p", "x"); r.code != 2 || !strings.Contains(r.stderr, "give one of them") {
		t.Fatalf("-c with --resume: %+v", r)
	}
}
