// Package pythonplugin_test runs the Python example plugin through the real
// kosong-host binary: stubs generated from the repository's .proto files
// into a temporary folder, grpcio's own TLS, the capability server dialled
// over go-plugin's broker.
package pythonplugin_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	if setupDir != "" {
		os.RemoveAll(setupDir)
	}
	os.Exit(code)
}

// python finds an interpreter with grpcio and grpcio-tools: Debian's
// /usr/bin/python3 first (where python3-grpcio installs), then python3 on
// PATH. Without one the tests are skipped, except in CI (.ci/run installs
// the packages), where a skip would hide that the example never ran.
func python(t *testing.T) string {
	t.Helper()
	for _, cand := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(cand)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import grpc, grpc_tools.protoc").Run() == nil {
			return path
		}
	}
	msg := "no python3 with grpcio and grpc_tools: apt-get install python3-grpcio python3-grpc-tools"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

var (
	setupOnce sync.Once
	setupDir  string
	setupErr  error
)

// plugin lays the example out in a temporary folder (shared by the tests,
// removed by TestMain) with stubs freshly generated from the repository's
// .proto files, and returns the path of an executable that runs it with py.
func plugin(t *testing.T, py string) string {
	t.Helper()
	setupOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kosong-pyplugin-")
		if err != nil {
			setupErr = err
			return
		}
		setupDir = dir
		for _, f := range []string{"kosong_plugin.py", "wordcount_plugin.py"} {
			b, err := os.ReadFile(f)
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, f), b, 0o644)
			}
			if err != nil {
				setupErr = err
				return
			}
		}
		cmd := exec.Command("./gen-stubs.sh", filepath.Join(dir, "gen"))
		cmd.Env = append(os.Environ(), "PYTHON="+py)
		if out, err := cmd.CombinedOutput(); err != nil {
			setupErr = fmt.Errorf("gen-stubs.sh: %v\n%s", err, out)
			return
		}
		wrapper := fmt.Sprintf("#!/bin/sh\nexec %q %q \"$@\"\n", py, filepath.Join(dir, "wordcount_plugin.py"))
		setupErr = os.WriteFile(filepath.Join(dir, "wordcount-plugin"), []byte(wrapper), 0o755)
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return filepath.Join(setupDir, "wordcount-plugin")
}

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, bin, dir, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "KOSONG_PLUGIN_PATH=")
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
	return result{out.String(), errb.String(), code}
}

// TestPythonPluginThroughHost loads the Python plugin through kosong-host
// (handshake, TLS with P-256 key exchange in both directions, Describe,
// Load) and calls its tools: a typed tool, and one that calls back into
// the host's Environment capability over the broker.
func TestPythonPluginThroughHost(t *testing.T) {
	py := python(t)
	exe := plugin(t, py)
	host, err := testbin.Build("cmd/kosong-host", "kosong-host")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	agent := fmt.Sprintf("version: 1\nagent:\n  name: py\n  system_prompt_path: ./s.md\n  tools:\n    - {plugin: %q}\n", exe)
	// slow.yaml: every call of the plugin times out after a second without progress.
	slow := fmt.Sprintf("version: 1\nagent:\n  name: py\n  system_prompt_path: ./s.md\n  tools:\n    - {plugin: %q, timeout: 1s}\n", exe)
	for name, body := range map[string]string{"agent.yaml": agent, "slow.yaml": slow, "s.md": "hi"} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("word\n", 30_000) // 30,000 one-word lines: "1\n" each, 60,000 characters

	tests := []struct {
		name        string
		agent       string
		stdin       string
		args        []string
		code        int
		stdout      []string
		stdoutNot   []string
		stderrHas   string
		stdoutLines int
	}{
		{name: "list", args: []string{"tools", "list"}, stdout: []string{"WordCount", "WhereAmI", "Environment", "Countdown", "Progress", "loaded"}},
		{name: "declared annotations", args: []string{"tools", "describe", "WordCount"},
			stdout: []string{"Annotations:  read-only, closed-world\n"}},
		{name: "no annotations declared: unknown", args: []string{"tools", "describe", "WhereAmI"},
			stdout: []string{"Annotations:  none declared\n"}},
		{name: "typed tool", args: []string{"tools", "call", "WordCount", `{"text":"hello big world\nsecond line"}`},
			stdout: []string{"5 words, 2 lines, 27 characters"}},
		{name: "default filled in by the host", args: []string{"tools", "call", "WordCount", `{"text":"a b\nc"}`},
			stdout: []string{"3 words, 2 lines"}},
		{name: "per line", args: []string{"tools", "call", "WordCount", `{"text":"a b\nc d e","per_line":true}`},
			stdout: []string{"2\n3\n"}},
		{name: "schema violation stops at the host", args: []string{"tools", "call", "WordCount", `{"text":7}`},
			code: 1, stderrHas: `parameter "text"`},
		{name: "capability over the broker", args: []string{"tools", "call", "WhereAmI", `{}`},
			stdout: []string{"os: " + runtime.GOOS, "work dir: " + work}},
		{name: "output capped in the plugin", stdin: fmt.Sprintf(`{"text":%q,"per_line":true}`, long),
			args: []string{"tools", "call", "WordCount"}, stdout: []string{"[...truncated]"}, stdoutNot: []string{strings.Repeat("1\n", 25_001)},
			stderrHas: "The output was truncated (at most 50000 characters"},
		{name: "progress keeps a long call alive", agent: "slow.yaml", args: []string{"tools", "call", "Countdown", `{"steps":5}`},
			stdout: []string{"5 steps"}},
		{name: "a call without progress times out and is cancelled", agent: "slow.yaml",
			args: []string{"tools", "call", "Countdown", `{"steps":5,"report":false}`}, code: 1, stderrHas: "Tool Countdown timed out after 1s"},
		{name: "the plugin sees the cancellation", agent: "slow.yaml",
			args: []string{"--log-level", "info", "tools", "call", "Countdown", `{"steps":5,"report":false}`}, code: 1,
			stderrHas: "countdown cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agent := tt.agent
			if agent == "" {
				agent = "agent.yaml"
			}
			r := run(t, host, work, tt.stdin, nil, append([]string{"--agent", agent}, tt.args...)...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(r.stdout, want) {
					t.Fatalf("stdout lacks %q:\n%s\nstderr %s", want, r.stdout, r.stderr)
				}
			}
			for _, not := range tt.stdoutNot {
				if strings.Contains(r.stdout, not) {
					t.Fatalf("stdout has %d characters: not capped", len(r.stdout))
				}
			}
			if !strings.Contains(r.stderr+r.stdout, tt.stderrHas) {
				t.Fatalf("output lacks %q:\nstdout %.500s\nstderr %s", tt.stderrHas, r.stdout, r.stderr)
			}
		})
	}
}

// TestPythonPluginByHand: the plugin refuses to run outside kosong-host,
// with one line on stderr, and describes its tools with --describe.
func TestPythonPluginByHand(t *testing.T) {
	exe := plugin(t, python(t))
	cookie := "KOSONG_PLUGIN_MAGIC_COOKIE=7c1e0f0a-kosong-host-tool-plugin"
	tests := []struct {
		name   string
		env    []string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"describe", nil, []string{"--describe"}, 0, `"name": "WhereAmI"`, ""},
		{"no cookie", nil, nil, 1, "", "this program is a kosong-host tool plugin: kosong-host starts it"},
		{"other protocol version", []string{cookie, "PLUGIN_PROTOCOL_VERSIONS=2,3"}, nil, 1, "",
			"plugin protocol: the host speaks versions 2,3, this plugin 1"},
		{"TLS descriptor not a number", []string{cookie, "KOSONG_PLUGIN_TLS_FD=x"}, nil, 1, "",
			"plugin TLS: KOSONG_PLUGIN_TLS_FD='x' is not an inherited file descriptor"},
		{"TLS descriptor not open", []string{cookie, "KOSONG_PLUGIN_TLS_FD=97"}, nil, 1, "",
			"plugin TLS: descriptor 97: OSError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, exe, t.TempDir(), "", append([]string{"KOSONG_PLUGIN_MAGIC_COOKIE="}, tt.env...), tt.args...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) || !strings.Contains(r.stderr, tt.stderr) {
				t.Fatalf("exit %d stdout %q stderr %q; want exit %d, %q, %q", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
			if tt.stdout == "" && r.stdout != "" {
				t.Fatalf("printed on stdout: %q", r.stdout)
			}
			if tt.code != 0 && strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Fatalf("error is not one line: %q", r.stderr)
			}
		})
	}
}
