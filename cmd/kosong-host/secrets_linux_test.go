//go:build linux

package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestHostUnreadableFromPlugins: a plugin cannot read the host's
// environment (which holds the provider keys) or memory through /proc, even
// with everything running as root: the host is non-dumpable and its
// plugins start without CAP_SYS_PTRACE.
func TestHostUnreadableFromPlugins(t *testing.T) {
	cc, err := testbin.Build("host/testdata/plugins/capcheck", "capcheck")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{
		"agent.yaml": fmt.Sprintf("version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [%q]\n", cc+":Peek"),
		"s.md":       "",
	})
	const key = "sk-peek-4711-do-not-leak"
	cmd := exec.Command(kosongHost(t), "--trust", "tools", "call", "Peek", `{}`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KOSONG_PLUGIN_PATH=", "OPENAI_API_KEY="+key, "XDG_STATE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tools call: %v\n%s", err, out)
	}
	if strings.Contains(string(out), key) {
		t.Fatalf("the plugin read the key:\n%s", out)
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("peek output %q: %v", out, err)
	}
	for _, f := range []string{"environ", "maps", "mem"} {
		if !strings.HasPrefix(got[f], "error: ") || !strings.Contains(got[f], "permission denied") {
			t.Errorf("%s: %.200q, want permission denied", f, got[f])
		}
	}
	const ptrace = 19 // CAP_SYS_PTRACE
	for _, set := range []string{"CapEff", "CapBnd"} {
		v, err := strconv.ParseUint(got[set], 16, 64)
		if err != nil || v&(1<<ptrace) != 0 {
			t.Errorf("%s = %q: the plugin has CAP_SYS_PTRACE", set, got[set])
		}
	}
	if os.Geteuid() == 0 {
		t.Logf("as root: plugin %s %s, host environ %q", "CapEff", got["CapEff"], got["environ"])
	}
}

// TestPluginExecErrors: the launcher's hidden entry point refuses what it
// cannot run in one line, exit 126.
func TestPluginExecErrors(t *testing.T) {
	dir := t.TempDir()
	for args, want := range map[string]string{
		"":                    "kosong-host plugin-exec: no program to run\n",
		"kosong-host":         "kosong-host plugin-exec: kosong-host: want a path\n",
		"/nonexistent/plugin": "kosong-host plugin-exec: no such file or directory\n",
	} {
		argv := []string{"plugin-exec"}
		if args != "" {
			argv = append(argv, args)
		}
		r := runUntrusted(t, dir, nil, "", argv...) // plugin-exec must come first: no --trust before it
		if r.code != 126 || r.stderr != want {
			t.Errorf("plugin-exec %s: exit %d, %q; want 126, %q", args, r.code, r.stderr, want)
		}
	}
}
