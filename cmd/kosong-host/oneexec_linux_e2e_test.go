//go:build linux

package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/proc"
)

// TestBuiltinSandboxedInOneExec: a sandboxed built-in is started as
// `kosong-host plugin-serve --sandbox RULES NAME`, one exec of the host
// binary with no plugin-exec wrapper before it (which would have executed
// `kosong-host plugin-serve NAME`), confines itself (a Shell command it
// runs cannot write outside the sandbox), and starts without the
// capabilities that read the host's memory (its bounding set has none of
// proc.DroppedCaps, as the host took them out of its own).
func TestBuiltinSandboxedInOneExec(t *testing.T) {
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
	// The command's parent is the plugin process.
	cmd := fmt.Sprintf(`tr '\0' '\n' < /proc/$PPID/cmdline; grep CapBnd /proc/$PPID/status; echo out > %s`, target)
	r := runHostEnv(t, dir, env, "", "tools", "call", "--yolo", "Shell", fmt.Sprintf(`{"command": %q}`, cmd))
	out := r.stdout + r.stderr
	if r.code != 1 || !strings.Contains(out, "Permission denied") {
		t.Fatalf("Shell writing outside the sandbox: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the refused write created the file")
	}
	lines := strings.Split(out, "\n")
	var argv []string
	var capBnd string
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "CapBnd:"); ok {
			capBnd = strings.TrimSpace(v)
		}
		argv = append(argv, strings.TrimSpace(l))
	}
	if !strings.Contains(strings.Join(argv, " "), "plugin-serve --sandbox {") || !strings.Contains(strings.Join(argv, " "), "} shell") {
		t.Errorf("the plugin process's command line is not `plugin-serve --sandbox RULES shell`:\n%s", out)
	}
	if strings.Contains(out, "plugin-exec") {
		t.Errorf("the plugin was started through plugin-exec:\n%s", out)
	}
	bnd, err := strconv.ParseUint(capBnd, 16, 64)
	if err != nil {
		t.Fatalf("CapBnd of the plugin process %q: %v\n%s", capBnd, err, out)
	}
	if os.Geteuid() == 0 {
		for _, c := range proc.DroppedCaps {
			if bnd&(1<<c) != 0 {
				t.Errorf("the plugin's bounding set %x has capability %d", bnd, c)
			}
		}
	}
	t.Logf("plugin CapBnd %s", capBnd)
}
