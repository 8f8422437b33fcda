//go:build linux

package main_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/testbin"
)

// outsideProcess starts a process outside every sandbox that says, once
// stop closes its stdin, whether it received SIGTERM ("signalled") or not
// ("quiet").
func outsideProcess(t *testing.T) (pid int, stop func() string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `trap 'echo signalled; exit 0' TERM; read x; echo quiet`)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() string {
		if !stopped {
			stopped = true
			in.Close()
			_ = cmd.Wait()
		}
		return strings.TrimSpace(out.String())
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL); stop() })
	return cmd.Process.Pid, stop
}

// abstractListener listens on a fresh abstract unix socket, accepting and
// closing every connection, and returns its name (without the @).
func abstractListener(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("kosong-e2e-%d-%s", os.Getpid(), filepath.Base(t.Name()))
	l, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return name
}

// A Shell confined by `sandbox:` cannot signal a process outside its
// sandbox (which survives), connect to an abstract unix socket the test
// opened, or send UDP under network: none; the same Shell without a
// sandbox can do all three.
func TestShellSandboxScopes(t *testing.T) {
	if abi := sandbox.ABI(); abi < sandbox.ScopeABI {
		t.Skipf("this kernel's Landlock (ABI %d) has no IPC scopes (ABI %d+)", abi, sandbox.ScopeABI)
	}
	env := sandboxEnv(t)
	probe, err := testbin.Build("host/testdata/sockprobe", "sockprobe")
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	for _, tc := range []struct {
		name, sandbox string
		allowed       bool
	}{
		{"sandboxed", ", sandbox: {write: [$WORK_DIR], network: none}", false},
		{"unconfined", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"s.md": "x", "agent.yaml": `version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools:
    - {plugin: shell, tools: [Shell]` + tc.sandbox + `}
`})
			pid, stop := outsideProcess(t)
			socket := abstractListener(t)
			command := fmt.Sprintf("kill -TERM %d; echo kill=$?; %s abstract %s; echo abstract=$?; %s udp %s; echo udp=$?",
				pid, probe, socket, probe, udp.LocalAddr())
			r := runHostEnv(t, dir, env, "", "tools", "call", "--yolo", "Shell", fmt.Sprintf(`{"command": %s}`, strconv.Quote(command)))
			out := r.stdout + r.stderr
			want := map[bool][]string{
				false: {"kill=1", "abstract=3", "udp=3", "Operation not permitted", "operation not permitted", "permission denied"},
				true:  {"kill=0", "abstract=0", "udp=0"},
			}[tc.allowed]
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q: stdout %q, stderr %q", w, r.stdout, r.stderr)
				}
			}
			report := map[bool]string{false: "quiet", true: "signalled"}[tc.allowed]
			if got := stop(); got != report {
				t.Errorf("the outside process says %q, want %q", got, report)
			}
		})
	}
}

// A stdio MCP server under a sandbox — its own, or the agent's — cannot
// write outside its write paths; inside them it can.
func TestMCPServerSandboxed(t *testing.T) {
	env := sandboxEnv(t)
	server := mcpTestServer(t)
	for _, tc := range []struct{ name, agentSandbox, serverSandbox string }{
		{"its own sandbox", "", "\n      sandbox: {write: [$WORK_DIR], network: none}"},
		{"the agent's sandbox", "\n  sandbox: {write: [$WORK_DIR], network: none}", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outside := t.TempDir()
			dir := writeFiles(t, map[string]string{"s.md": "x", "agent.yaml": fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools: []%s
  mcp_servers:
    test:
      command: %q
      args: [-write]%s
`, tc.agentSandbox, server, tc.serverSandbox)})
			write := func(path string) result {
				return runHostEnv(t, dir, env, "", "tools", "call", "--yolo", "test__write", fmt.Sprintf(`{"path": %q, "text": "hi"}`, path))
			}
			if r := write(filepath.Join(dir, "inside.txt")); r.code != 0 {
				t.Fatalf("a write in the work dir: exit %d: %s%s", r.code, r.stdout, r.stderr)
			}
			target := filepath.Join(outside, "x.txt")
			r := write(target)
			if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "permission denied") {
				t.Errorf("a write outside the sandbox: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(target); err == nil {
				t.Error("the refused write created the file")
			}
		})
	}
}

// An MCP server's sandbox naming a path that does not exist fails the
// load in one line naming the file, the server and the path; the server
// never starts.
func TestMCPServerSandboxBadPath(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	dir := writeFiles(t, map[string]string{"s.md": "x", "agent.yaml": fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools: []
  mcp_servers:
    test:
      command: sh
      args: [-c, "touch %s"]
      sandbox: {write: [./nope]}
`, marker)})
	r := runHost(t, dir, "", "tools", "list")
	msg := strings.TrimSpace(r.stderr)
	for _, want := range []string{filepath.Join(dir, "agent.yaml") + ":10:", "sandbox (for mcp server test)", "write path " + filepath.Join(dir, "nope") + " does not exist"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr %q lacks %q", msg, want)
		}
	}
	if r.code != 2 || strings.Contains(msg, "\n") {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line", r.code, msg)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the server started")
	}
}
