package main_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/declcache"
	"github.com/kosong-host/kosong-host/host/testbin"
)

func TestMain(m *testing.M) {
	var err error
	if cacheRoot, err = os.MkdirTemp("", "kosong-e2e-cache-"); err != nil {
		panic(err)
	}
	// A host started without hostEnv shares this one with the others.
	os.Setenv(declcache.CacheDirEnv, filepath.Join(cacheRoot, "shared"))
	code := m.Run()
	testbin.Cleanup()
	os.RemoveAll(cacheRoot)
	os.Exit(code)
}

// cacheRoot holds the cache folders of the hosts under test
// (KOSONG_CACHE_DIR), so that none uses ~/.cache/kosong-host: each host
// run through hostEnv gets an empty one, and starts its plugins as the
// first run of a new user does; a test of the declaration cache gives its
// runs one folder.
var cacheRoot string

var (
	buildOnce sync.Once
	hostBin   string
	buildErr  error
)

// kosongHost builds kosong-host alone, as `make build` does: the
// first-party plugins are its built-ins, and no plugins/ folder is beside it.
func kosongHost(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		hostBin, buildErr = testbin.Build("cmd/kosong-host", "kosong-host")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return hostBin
}

// standalonePlugin builds the standalone binary of a first-party plugin
// (plugins/NAME/cmd/kosong-plugin-NAME), outside the folder of kosong-host.
func standalonePlugin(t *testing.T, name string) string {
	t.Helper()
	p, err := testbin.Build("plugins/"+name+"/cmd/kosong-plugin-"+name, "standalone/kosong-plugin-"+name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type result struct {
	stdout, stderr string
	code           int
}

// runHost runs kosong-host in dir with args.
func runHost(t *testing.T, dir string, stdin string, args ...string) result {
	t.Helper()
	return runHostEnv(t, dir, nil, stdin, args...)
}

// runHostEnv runs kosong-host in dir with args and extra environment, and
// no provider keys but those given. The folder is trusted (--trust): a
// test's folder holds the agent files it means to run.
func runHostEnv(t *testing.T, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	return runCommand(t, kosongHost(t), dir, env, stdin, append([]string{"--trust"}, args...)...)
}

// runUntrusted is runHostEnv without --trust: the folder's own agent file
// and .env are used only if the trust store says so.
func runUntrusted(t *testing.T, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	return runCommand(t, kosongHost(t), dir, env, stdin, args...)
}

// hostEnv is the environment of a host under test: the test's own with no
// plugin search path and no provider API keys, then extra.
// expectWithin bounds every wait for the output of a running kosong-host
// (a terminal's screen, a pipe): generous, on 2 shared cores.
const expectWithin = 60 * time.Second

func hostEnv(extra ...string) []string {
	cache, err := os.MkdirTemp(cacheRoot, "")
	if err != nil {
		panic(err)
	}
	env := append(os.Environ(), "KOSONG_PLUGIN_PATH=", "KIMI_API_KEY=", "OPENAI_API_KEY=", "ANTHROPIC_API_KEY=",
		"GOOGLE_API_KEY=", "GEMINI_API_KEY=", declcache.CacheDirEnv+"="+cache)
	return append(env, extra...)
}

// runCommand runs the kosong-host binary at bin as runHostEnv does.
func runCommand(t *testing.T, bin, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = hostEnv("XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

func writeFiles(t *testing.T, files map[string]string) string {
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

const echoAgent = "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"echo:Echo\"]\n"

func TestToolsCallEcho(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi"})
	tests := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		stdout     string
		stderrHas  string
		stderrNone bool
	}{
		{"ok", "", []string{"tools", "call", "Echo", `{"text":"hi"}`}, 0, "hi\n", "", true},
		{"arguments on stdin", `{"text":"from stdin"}`, []string{"tools", "call", "Echo"}, 0, "from stdin\n", "", true},
		{"invalid JSON", "", []string{"tools", "call", "Echo", `{bad`}, 1, "", "Error parsing JSON arguments: invalid character 'b'", false},
		{"schema violation", "", []string{"tools", "call", "Echo", `{"text":1}`}, 1, "", `Error validating JSON arguments: parameter "text": type: 1 has type "integer", want "string"`, false},
		{"unknown tool", "", []string{"tools", "call", "Nope", `{}`}, 2, "", "Tool `Nope` not found", false},
		{"mistyped tool", "", []string{"tools", "call", "Ecko", `{}`}, 2, "", "(did you mean Echo?)", false},
		{"unknown flag", "", []string{"tools", "call", "--bogus"}, 2, "", "unknown flag: --bogus", false},
		{"bad log level", "", []string{"--log-level", "loud", "tools", "list"}, 2, "", `invalid --log-level "loud"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHost(t, dir, tt.stdin, append([]string{"--agent", "agent.yaml"}, tt.args...)...)
			if r.code != tt.code || (tt.stdout != "" && r.stdout != tt.stdout) || !strings.Contains(r.stderr, tt.stderrHas) {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			if tt.stderrNone && r.stderr != "" {
				t.Fatalf("unexpected stderr %q", r.stderr)
			}
		})
	}
}

func TestSpecErrorsExitTwo(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"missing agent file", map[string]string{"s.md": ""}, "Agent spec file not found: "},
		{"invalid YAML", map[string]string{"agent.yaml": "version: 1\nagent: [\n"}, "Invalid YAML in agent spec file: "},
		{"unknown key", map[string]string{"agent.yaml": strings.Replace(echoAgent, "name: t", "name: t\n  toolz: []", 1), "s.md": ""}, `unknown key "toolz"`},
		{"version 2", map[string]string{"agent.yaml": strings.Replace(echoAgent, "version: 1", "version: 2", 1), "s.md": ""}, "Unsupported agent spec version: 2"},
		{"extend cycle", map[string]string{
			"agent.yaml": "version: 1\nagent:\n  extend: ./b.yaml\n",
			"b.yaml":     "version: 1\nagent:\n  extend: ./agent.yaml\n",
		}, "agent spec extend cycle: "},
		{"plugin not found", map[string]string{"agent.yaml": strings.Replace(echoAgent, "echo:Echo", "ghost:Ghost", 1), "s.md": ""},
			"Invalid tools: [plugin ghost: kosong-plugin-ghost not found in "},
		{"not a plugin", map[string]string{"agent.yaml": strings.Replace(echoAgent, "echo:Echo", "/bin/true:X", 1), "s.md": ""},
			"is not a kosong plugin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, tt.files)
			for _, args := range [][]string{{"tools", "list"}, {"validate"}, {"tools", "call", "Echo", "{}"}} {
				r := runHost(t, dir, "", append([]string{"--agent", "agent.yaml"}, args...)...)
				if r.code != 2 || !strings.HasPrefix(r.stderr, "error: ") || !strings.Contains(r.stderr, tt.want) {
					t.Fatalf("%v: exit %d stderr %q, want exit 2 and %q", args, r.code, r.stderr, tt.want)
				}
				if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || strings.Contains(r.stderr, "goroutine") {
					t.Fatalf("%v: error is not one line: %q", args, r.stderr)
				}
			}
		})
	}
}

func TestValidateAndVersion(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi"})
	if r := runHost(t, dir, "", "validate"); r.code != 0 || !strings.Contains(r.stdout, `ok: agent "t", 1 plugins, 1 tools loaded, 0 skipped`) {
		t.Fatalf("validate: %+v", r)
	}
	if r := runHost(t, dir, "", "version"); r.code != 0 || !strings.Contains(r.stdout, "plugin protocol 1") {
		t.Fatalf("version: %+v", r)
	}
}

// TestDefaultAgent runs the repository's own agent.yaml, as a newcomer would.
func TestDefaultAgent(t *testing.T) {
	root := testbin.Root()
	r := runHost(t, root, "", "tools", "list")
	if r.code != 0 {
		t.Fatalf("tools list: exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"Echo", "Shell", "ReadFile", "WriteFile", "StrReplaceFile", "Glob", "Grep", "FetchURL", "SetTodoList", "Think"} {
		if !hasRow(r.stdout, want, "loaded") {
			t.Errorf("tools list lacks %s loaded:\n%s", want, r.stdout)
		}
	}
	if !hasRow(r.stdout, "SearchWeb", "skipped: no search service configured") {
		t.Errorf("tools list lacks SearchWeb skipped:\n%s", r.stdout)
	}
	r = runHost(t, root, "", "tools", "list", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"status": "skipped"`) {
		t.Fatalf("tools list --json: %+v", r)
	}
}

func hasRow(table, name, status string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == name && strings.Contains(line, status) {
			return true
		}
	}
	return false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestToolsDescribe(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi"})
	r := runHost(t, dir, "", "tools", "describe", "Echo")
	for _, want := range []string{"Name:         Echo", "Source:       builtin echo", "Capabilities: -", `"required": [`, "Echo the given text back"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("describe lacks %q: exit %d\n%s%s", want, r.code, r.stdout, r.stderr)
		}
	}
	if r := runHost(t, dir, "", "tools", "describe", "Nope"); r.code != 2 || !strings.Contains(r.stderr, "Tool `Nope` not found in agent.yaml (tools: Echo)") {
		t.Fatalf("describe unknown: %+v", r)
	}
}

// ansiCode matches the terminal's control sequences.
var ansiCode = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Z]|[=>])`)
