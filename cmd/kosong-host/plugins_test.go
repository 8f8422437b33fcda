package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/pins"
)

func TestPluginsLockAndVerify(t *testing.T) {
	kosongHost(t)
	dir := writeFiles(t, map[string]string{
		"agent.yaml": strings.Replace(echoAgent, `"echo:Echo"`, `"./bin/kosong-plugin-echo:Echo"`, 1),
		"s.md":       "",
	})
	bin := filepath.Join(dir, "bin", "kosong-plugin-echo")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	b, err := os.ReadFile(standalonePlugin(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}

	if r := runHost(t, dir, "", "plugins", "verify"); r.code != 0 || !strings.Contains(r.stdout, "not pinned") {
		t.Fatalf("verify before lock: %+v", r)
	}
	if r := runHost(t, dir, "", "plugins", "lock"); r.code != 0 || !strings.Contains(r.stdout, "wrote 1 pins to ") {
		t.Fatalf("lock: %+v", r)
	}
	lock, err := os.ReadFile(filepath.Join(dir, "agent.lock.yaml"))
	if err != nil || !strings.Contains(string(lock), "kosong-plugin-echo:") || !strings.Contains(string(lock), `path: "bin/kosong-plugin-echo"`) {
		t.Fatalf("lock file: %s %v", lock, err)
	}
	if r := runHost(t, dir, "", "plugins", "verify"); r.code != 0 || !strings.Contains(r.stdout, "ok (lock file)") {
		t.Fatalf("verify: %+v", r)
	}
	if r := runHost(t, dir, "", "tools", "call", "Echo", `{"text":"pinned"}`); r.code != 0 || r.stdout != "pinned\n" {
		t.Fatalf("call with a good pin: %+v", r)
	}
	// The binary changes behind the lock's back.
	if err := os.WriteFile(bin, append(b, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runHost(t, dir, "", "plugins", "verify"); r.code != 1 || !strings.Contains(r.stdout, "MISMATCH: lock file "+filepath.Join(dir, "agent.lock.yaml")+" pins") {
		t.Fatalf("verify after tampering: %+v", r)
	}
	if r := runHost(t, dir, "", "tools", "call", "Echo", `{"text":"x"}`); r.code != 2 || !strings.Contains(r.stderr, "sha256 mismatch for ") {
		t.Fatalf("call after tampering: %+v", r)
	}
}

// TestPinsCoverSubagents: the top agent's lock file pins the plugins of its
// subagents (recursively); a subagent plugin changed behind the lock's back
// is refused in the Agent call, naming the lock file, the plugin and both
// hashes, and `plugins verify` reports it.
func TestPinsCoverSubagents(t *testing.T) {
	kosongHost(t)
	dir := writeFiles(t, map[string]string{
		"agent.yaml": "version: 1\nagent:\n  name: top\n  system_prompt_path: ./s.md\n  tools: [\"echo:Echo\"]\n" +
			"  subagents:\n    helper: {path: ./sub/helper.yaml, description: helps}\n",
		"sub/helper.yaml": "version: 1\nagent:\n  name: helper\n  system_prompt_path: ../s.md\n  tools: [\"../bin/kosong-plugin-echo2:Echo\"]\n" +
			"  subagents:\n    deeper: {path: ./deeper.yaml, description: deeper}\n",
		"sub/deeper.yaml": "version: 1\nagent:\n  name: deeper\n  system_prompt_path: ../s.md\n  tools: [\"think:Think\"]\n",
		"s.md":            "",
		"script.yaml": `
turns:
  - tool_calls:
      - {id: a1, name: Agent, arguments: {subagent: helper, prompt: "echo something"}}
  - text: "done"
`,
	})
	bin := filepath.Join(dir, "bin", "kosong-plugin-echo2")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	b, err := os.ReadFile(standalonePlugin(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runHost(t, dir, "", "plugins", "lock"); r.code != 0 || !strings.Contains(r.stdout, "wrote 3 pins to ") {
		t.Fatalf("lock: %+v", r)
	}
	lockPath := filepath.Join(dir, "agent.lock.yaml")
	lock, _ := os.ReadFile(lockPath)
	for _, want := range []string{"echo:", "kosong-plugin-echo2:", `path: "bin/kosong-plugin-echo2"`, "think:"} {
		if !strings.Contains(string(lock), want) {
			t.Fatalf("lock file lacks %q:\n%s", want, lock)
		}
	}
	if r := runHost(t, dir, "", "plugins", "verify"); r.code != 0 || strings.Count(r.stdout, "ok (lock file)") != 1 || strings.Count(r.stdout, "built-in (part of kosong-host") != 2 {
		t.Fatalf("verify: %+v", r)
	}
	good, _ := pins.FileSHA256(bin)
	if err := os.WriteFile(bin, append(b, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	bad, _ := pins.FileSHA256(bin)
	if r := runHost(t, dir, "", "plugins", "verify"); r.code != 1 ||
		!strings.Contains(r.stdout, "kosong-plugin-echo2  MISMATCH: lock file "+lockPath+" pins "+good+", the file is "+bad) ||
		!strings.Contains(r.stderr, "run `kosong-host plugins lock`") {
		t.Fatalf("verify after tampering: %+v", r)
	}
	r := runHost(t, dir, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo",
		"--output-format", "stream-json", "-p", "go")
	want := "plugin kosong-plugin-echo2: sha256 mismatch for " + bin + ": lock file " + lockPath + " pins " + good +
		", the file is " + bad + "; if the change is intended, run `kosong-host plugins lock`"
	var got string
	for _, line := range strings.Split(r.stdout, "\n") {
		var ev struct{ Type, ID, Status, Output, Message string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "tool_result" && ev.ID == "a1" {
			got = line
		}
	}
	if !strings.Contains(got, want) {
		t.Fatalf("Agent call result %s\nwant it to contain %q\n%s", got, want, r.stderr)
	}
}

// TestPluginsLockBuiltinAgent: the built-in agent is part of the host; a
// lock of it is refused, so nothing is written into the cache that would
// pin an older host for every later run.
func TestPluginsLockBuiltinAgent(t *testing.T) {
	cache := t.TempDir()
	r := runHostEnv(t, t.TempDir(), []string{"XDG_CACHE_HOME=" + cache}, "", "plugins", "lock")
	if r.code != 2 || !strings.Contains(r.stderr, "the built-in agent is part of kosong-host and has no lock file") ||
		strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("lock of the built-in agent: %+v", r)
	}
	locks, _ := filepath.Glob(filepath.Join(cache, "kosong-host", "agents-*", "*", "agent.lock.yaml"))
	if agents, _ := filepath.Glob(filepath.Join(cache, "kosong-host", "agents-*")); len(agents) != 1 || len(locks) != 0 {
		t.Fatalf("cache: agents %v, lock files %v", agents, locks)
	}
}
