package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/testbin"
)

type statusRow struct {
	Name, Plugin, Path, Status, Source string
	Builtin                            bool
}

func listJSON(t *testing.T, r result) map[string]statusRow {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("tools list: exit %d: %s", r.code, r.stderr)
	}
	var rows []statusRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	out := map[string]statusRow{}
	for _, row := range rows {
		out[row.Name] = row
	}
	return out
}

// TestBuiltinsServeTheStandardTools: kosong-host alone (no plugins/ beside
// it, no --plugin-dir, no KOSONG_PLUGIN_PATH) loads every standard tool of
// the repository's agent from its built-in plugins, each in a process
// started from the host binary.
func TestBuiltinsServeTheStandardTools(t *testing.T) {
	host := kosongHost(t)
	if fileExists(filepath.Join(filepath.Dir(host), "plugins")) {
		t.Fatalf("%s has a plugins/ folder beside it", host)
	}
	plugins := map[string]string{
		"Echo": "echo", "Shell": "shell", "ReadFile": "file", "WriteFile": "file", "StrReplaceFile": "file",
		"Glob": "file", "Grep": "file", "FetchURL": "web", "SearchWeb": "web", "SetTodoList": "todo", "Think": "think",
	}
	rows := listJSON(t, runHost(t, testbin.Root(), "", "tools", "list", "--json"))
	for tool, plugin := range plugins {
		row, ok := rows[tool]
		wantStatus := "loaded"
		if tool == "SearchWeb" {
			wantStatus = "skipped" // no search service configured
		}
		if !ok || row.Status != wantStatus || row.Source != "builtin "+plugin || !row.Builtin || row.Path != host || row.Plugin != plugin {
			t.Errorf("%s: %+v, want %s from builtin %s (%s)", tool, row, wantStatus, plugin, host)
		}
	}
	if len(rows) != len(plugins) {
		t.Errorf("tools list has %d rows, want %d: %v", len(rows), len(plugins), rows)
	}
	r := runHost(t, testbin.Root(), "", "tools", "list")
	for tool, plugin := range plugins {
		if !hasRow(r.stdout, tool, "builtin "+plugin) {
			t.Errorf("tools list lacks %s from builtin %s:\n%s", tool, plugin, r.stdout)
		}
	}
}

// TestInstalledPluginOverridesBuiltin: a kosong-plugin-echo found in
// --plugin-dir, KOSONG_PLUGIN_PATH or plugins/ beside kosong-host is
// launched instead of the built-in echo, and tools list and run -p say so
// in one line on stderr unless it is the built-in.
func TestInstalledPluginOverridesBuiltin(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi",
		"script.yaml": "turns:\n  - text: \"Hello.\"\n"})
	echo := standalonePlugin(t, "echo")
	pluginDir := t.TempDir()
	installed := filepath.Join(pluginDir, "kosong-plugin-echo")
	copyExecutable(t, echo, installed)

	// A copy of kosong-host with plugins/kosong-plugin-echo beside it.
	hostDir := t.TempDir()
	host := filepath.Join(hostDir, "kosong-host")
	copyExecutable(t, kosongHost(t), host)
	beside := filepath.Join(hostDir, "plugins", "kosong-plugin-echo")
	copyExecutable(t, echo, beside)

	tests := []struct {
		name   string
		host   string
		env    []string
		args   []string
		source string
	}{
		{"built-in", kosongHost(t), nil, nil, "builtin echo"},
		{"--plugin-dir", kosongHost(t), nil, []string{"--plugin-dir", pluginDir}, "plugin echo (" + installed + ")"},
		{"KOSONG_PLUGIN_PATH", kosongHost(t), []string{"KOSONG_PLUGIN_PATH=" + pluginDir}, nil, "plugin echo (" + installed + ")"},
		{"plugins/ beside kosong-host", host, nil, nil, "plugin echo (" + beside + ")"},
		{"--plugin-dir before plugins/ beside kosong-host", host, nil, []string{"--plugin-dir", pluginDir}, "plugin echo (" + installed + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append(append([]string{"--agent", "agent.yaml"}, tt.args...), "tools", "list", "--json")
			r := runHostBinary(t, tt.host, dir, tt.env, args...)
			row := listJSON(t, r)["Echo"]
			if row.Status != "loaded" || row.Source != tt.source || row.Builtin != strings.HasPrefix(tt.source, "builtin") {
				t.Fatalf("Echo: %+v, want loaded from %s", row, tt.source)
			}
			// An installed binary no pin names is said in one line.
			warning := ""
			if !row.Builtin {
				warning = "warning: built-in plugin replaced by an installed binary that no pin names: echo by " + row.Path +
					" (pin it with `kosong-host plugins lock`, or remove it to use the built-in)\n"
			}
			if r.stderr != warning {
				t.Fatalf("tools list stderr %q, want %q", r.stderr, warning)
			}
			// run -p says it on stderr too.
			oneShot := append(append([]string{"--agent", "agent.yaml"}, tt.args...), "run", "--provider", "scripted",
				"--script", "script.yaml", "-p", "hi")
			r = runHostBinary(t, tt.host, dir, tt.env, oneShot...)
			if r.code != 0 || (warning == "") == strings.Contains(r.stderr, "warning: built-in plugin replaced") ||
				(warning != "" && !strings.Contains(r.stderr, warning)) {
				t.Fatalf("run -p: exit %d, stderr %q, want the warning %q", r.code, r.stderr, warning)
			}
			call := append(append([]string{"--agent", "agent.yaml"}, tt.args...), "tools", "call", "Echo", `{"text":"hi"}`)
			if r := runHostBinary(t, tt.host, dir, tt.env, call...); r.code != 0 || r.stdout != "hi\n" {
				t.Fatalf("tools call: %+v", r)
			}
		})
	}
}

// TestPinnedOverrideIsSilent: an installed binary that replaces a built-in
// and is pinned (by the lock file or the agent file) is meant: no warning.
func TestPinnedOverrideIsSilent(t *testing.T) {
	pluginDir := t.TempDir()
	installed := filepath.Join(pluginDir, "kosong-plugin-echo")
	copyExecutable(t, standalonePlugin(t, "echo"), installed)
	sum, err := pins.FileSHA256(installed)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, agent string
		lock        bool
	}{
		{"lock file", echoAgent, true},
		{"agent file", strings.Replace(echoAgent, `"echo:Echo"`, `{plugin: echo, tools: [Echo], sha256: `+sum+`}`, 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"agent.yaml": tt.agent, "s.md": ""})
			if tt.lock {
				if r := runHost(t, dir, "", "--plugin-dir", pluginDir, "plugins", "lock"); r.code != 0 {
					t.Fatalf("lock: %+v", r)
				}
			}
			r := runHost(t, dir, "", "--plugin-dir", pluginDir, "tools", "list")
			if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "plugin echo ("+installed+")") {
				t.Fatalf("tools list: %+v", r)
			}
		})
	}
}

// TestBuiltinPin: the pin of a built-in plugin is the sha256 of the
// kosong-host binary; a wrong one is refused before anything runs, and the
// lock file records the host binary.
func TestBuiltinPin(t *testing.T) {
	host := kosongHost(t)
	sum, err := pins.FileSHA256(host)
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("0", 64)
	pinned := func(pin string) string {
		return strings.Replace(echoAgent, `"echo:Echo"`, `{plugin: echo, tools: [Echo], sha256: `+pin+`}`, 1)
	}
	tests := []struct {
		name      string
		agent     string
		code      int
		stdout    string
		stderrHas string
	}{
		{"the host binary's hash", pinned(sum), 0, "pinned\n", ""},
		{"a wrong pin", pinned(wrong), 2, "", "sha256 mismatch for " + host + ": agent spec pins " + wrong + ", the file is " + sum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"agent.yaml": tt.agent, "s.md": ""})
			r := runHost(t, dir, "", "tools", "call", "Echo", `{"text":"pinned"}`)
			if r.code != tt.code || r.stdout != tt.stdout || !strings.Contains(r.stderr, tt.stderrHas) {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			wantVerify, verifyCode := "ok (agent spec)", 0
			if tt.code != 0 {
				wantVerify, verifyCode = "MISMATCH: agent spec pins "+wrong+", the file is "+sum, 1
			}
			if r := runHost(t, dir, "", "plugins", "verify"); r.code != verifyCode || !strings.Contains(r.stdout, wantVerify) || !strings.Contains(r.stdout, host) {
				t.Fatalf("verify: %+v", r)
			}
		})
	}

	t.Run("lock file", func(t *testing.T) {
		// A built-in is pinned by the host's version, not by the hash of
		// the host binary, so another build of kosong-host still runs.
		dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": ""})
		if r := runHost(t, dir, "", "plugins", "lock"); r.code != 0 || !strings.Contains(r.stdout, "wrote 1 pins to ") {
			t.Fatalf("lock: %+v", r)
		}
		lock, err := os.ReadFile(filepath.Join(dir, "agent.lock.yaml"))
		if err != nil || strings.Contains(string(lock), sum) || !strings.Contains(string(lock), "echo:\n    builtin: ") {
			t.Fatalf("lock file pins the host binary %s (%s): %s %v", host, sum, lock, err)
		}
		if r := runHost(t, dir, "", "plugins", "verify"); r.code != 0 || !strings.Contains(r.stdout, "built-in (part of kosong-host") {
			t.Fatalf("verify: %+v", r)
		}
		// A lock file written with the hash of another kosong-host binary.
		stale := "version: 1\nplugins:\n  echo:\n    path: \"x\"\n    sha256: " + wrong + "\n"
		if err := os.WriteFile(filepath.Join(dir, "agent.lock.yaml"), []byte(stale), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := runHost(t, dir, "", "tools", "call", "Echo", `{"text":"x"}`); r.code != 0 || r.stdout != "x\n" {
			t.Fatalf("call with another host's lock: %+v", r)
		}
	})
}

// TestPluginServe: the hidden subcommand a built-in plugin's process runs
// is not listed, and refuses a name it does not serve in one line.
func TestPluginServe(t *testing.T) {
	dir := t.TempDir()
	if r := runHost(t, dir, "", "--help"); r.code != 0 || strings.Contains(r.stdout, "plugin-serve") {
		t.Fatalf("--help lists plugin-serve: %+v", r)
	}
	r := runHost(t, dir, "", "plugin-serve", "nope")
	if r.code != 2 || r.stderr != "error: no built-in plugin \"nope\" (built-ins: ask, echo, file, media, shell, think, todo, web)\n" {
		t.Fatalf("plugin-serve nope: %+v", r)
	}
	// Run by hand, a built-in plugin says it is one and exits, as a
	// plugin binary does.
	r = runHost(t, dir, "", "plugin-serve", "echo")
	if r.code != 1 || !strings.Contains(r.stderr, "this binary is a kosong-host tool plugin") || r.stdout != "" {
		t.Fatalf("plugin-serve echo by hand: %+v", r)
	}
}

// runHostBinary runs the kosong-host binary at host in dir, like runHostEnv.
func runHostBinary(t *testing.T, host, dir string, env []string, args ...string) result {
	t.Helper()
	return runCommand(t, host, dir, env, "", args...)
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
