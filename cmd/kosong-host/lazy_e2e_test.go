package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/declcache"
)

// starts counts the plugin starts a host logged at debug level
// (go-plugin's "starting plugin").
func starts(stderr string) int { return strings.Count(stderr, "starting plugin") }

// TestLazyToolsList: the first listing starts the agent's plugin and keeps
// its declaration; later listings start none and list the same, but with
// --check, --eager-plugins or eager_plugins: true in the configuration
// file; a plugin binary changed on disk is started again.
func TestLazyToolsList(t *testing.T) {
	plugins := t.TempDir()
	bin := filepath.Join(plugins, "kosong-plugin-echo")
	data, err := os.ReadFile(standalonePlugin(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi"})
	cache := t.TempDir()
	eagerConfig := t.TempDir()
	if err := os.MkdirAll(filepath.Join(eagerConfig, "kosong-host"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(eagerConfig, "kosong-host", "config.yaml"), []byte("eager_plugins: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := func(env []string, args ...string) result {
		t.Helper()
		env = append([]string{declcache.CacheDirEnv + "=" + cache}, env...)
		r := runHostEnv(t, dir, env, "", append([]string{"--log-level", "debug", "--plugin-dir", plugins, "tools", "list"}, args...)...)
		if r.code != 0 || !strings.Contains(r.stdout, "Echo") || !strings.Contains(r.stdout, "loaded") {
			t.Fatalf("tools list %v: exit %d\n%s\n%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	first := list(nil)
	if n := starts(first.stderr); n != 1 {
		t.Fatalf("first listing: %d starts, want 1\n%s", n, first.stderr)
	}
	second := list(nil)
	if n := starts(second.stderr); n != 0 || second.stdout != first.stdout {
		t.Fatalf("second listing: %d starts (want 0), output\n%s\nwant\n%s", n, second.stdout, first.stdout)
	}
	for _, tt := range []struct {
		name string
		env  []string
		args []string
	}{
		{"--check", nil, []string{"--check"}},
		{"--eager-plugins", nil, []string{"--eager-plugins"}},
		{"eager_plugins in the configuration file", []string{"XDG_CONFIG_HOME=" + eagerConfig}, nil},
	} {
		if r := list(tt.env, tt.args...); starts(r.stderr) != 1 {
			t.Errorf("%s: %d starts, want 1\n%s", tt.name, starts(r.stderr), r.stderr)
		}
	}
	// The binary changes on disk (trailing bytes: it still runs).
	f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("changed")
	f.Close()
	if r := list(nil); starts(r.stderr) != 1 {
		t.Fatalf("changed binary: %d starts, want 1\n%s", starts(r.stderr), r.stderr)
	}
	if r := list(nil); starts(r.stderr) != 0 {
		t.Fatalf("changed binary, described again: %d starts, want 0\n%s", starts(r.stderr), r.stderr)
	}
}

// TestLazyRunStartsAtFirstCall: with the declaration kept, a run offers
// the plugin's tool to the model without starting the plugin, which
// starts at the tool's first call and answers it; a one-shot run whose
// model calls no tool starts no plugin.
func TestLazyRunStartsAtFirstCall(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi",
		"call.yaml": "turns:\n  - tool_calls: [{id: e1, name: Echo, arguments: {text: lazy hello}}]\n  - text: done\n",
		"none.yaml": "turns:\n  - text: nothing to call\n"})
	env := []string{declcache.CacheDirEnv + "=" + t.TempDir()}
	run := func(script string) result {
		t.Helper()
		r := runHostEnv(t, dir, env, "", "--log-level", "debug", "run", "--provider", "scripted", "--script", script,
			"--yolo", "--output-format", "stream-json", "-p", "go")
		if r.code != 0 {
			t.Fatalf("run %s: exit %d\n%s\n%s", script, r.code, r.stdout, r.stderr)
		}
		return r
	}
	if r := run("none.yaml"); starts(r.stderr) != 1 {
		t.Fatalf("cold cache: %d starts, want 1\n%s", starts(r.stderr), r.stderr)
	}
	if r := run("none.yaml"); starts(r.stderr) != 0 {
		t.Fatalf("no call: %d starts, want 0\n%s", starts(r.stderr), r.stderr)
	}
	r := run("call.yaml")
	if starts(r.stderr) != 1 || !strings.Contains(r.stdout, "lazy hello") || !strings.Contains(r.stdout, `"status":"ok"`) {
		t.Fatalf("first call: %d starts, want 1\n%s\n%s", starts(r.stderr), r.stdout, r.stderr)
	}
}

// TestLazyDefaultAgent: the default agent's plugins (built-ins, the file
// plugin in a sandbox naming the session's state dir) are all listed
// from their declarations once kept, from one session to the next.
func TestLazyDefaultAgent(t *testing.T) {
	dir := t.TempDir()
	env := []string{declcache.CacheDirEnv + "=" + t.TempDir()}
	var outs []string
	for i, want := range []int{-1, 0} {
		r := runHostEnv(t, dir, env, "", "--log-level", "debug", "tools", "list")
		if r.code != 0 || !strings.Contains(r.stdout, "built-in default") {
			t.Fatalf("tools list %d: exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
		if n := starts(r.stderr); want >= 0 && n != want || want < 0 && n == 0 {
			t.Fatalf("tools list %d: %d starts\n%s", i, n, r.stderr)
		}
		outs = append(outs, r.stdout)
	}
	if outs[0] != outs[1] {
		t.Fatalf("the listings differ:\n%s\n%s", outs[0], outs[1])
	}
}
