//go:build unix

package main_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serveBuiltin runs `kosong-host plugins serve NAME` on a free loopback port
// with the certificates in dir/certs and returns its address.
func serveBuiltin(t *testing.T, dir, name string) string {
	t.Helper()
	cmd := exec.Command(kosongHost(t), "plugins", "serve", name, "--listen", "127.0.0.1:0",
		"--ca", "certs/ca.pem", "--cert", "certs/server.pem", "--key", "certs/server-key.pem")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("plugins serve did not stop cleanly on SIGTERM: %v", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("plugins serve did not stop on SIGTERM")
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line := <-lines:
		addr, ok := strings.CutPrefix(line, "serving "+name+" on ")
		if !ok {
			t.Fatalf("plugins serve printed %q", line)
		}
		return addr
	case <-time.After(30 * time.Second):
		t.Fatal("plugins serve did not start listening")
	}
	return ""
}

const remoteAgent = "version: 1\nagent:\n  name: r\n  system_prompt_path: ./s.md\n  tools:\n" +
	"    - remote: ADDR\n      name: rshell\n      tls: {ca: certs/ca.pem, cert: certs/client.pem, key: certs/client-key.pem}\n"

func TestRemoteBuiltinThroughAgentYAML(t *testing.T) {
	dir := writeFiles(t, map[string]string{"s.md": "x"})
	if r := runHost(t, dir, "", "plugins", "certs", "certs"); r.code != 0 || !strings.Contains(r.stdout, "certs/server.pem") {
		t.Fatalf("plugins certs: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	addr := serveBuiltin(t, dir, "shell")
	agentPath := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(agentPath, []byte(strings.Replace(remoteAgent, "ADDR", addr, 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	list := runHost(t, dir, "", "--agent", agentPath, "tools", "list")
	if list.code != 0 || !hasRow(list.stdout, "Shell", "loaded") || !strings.Contains(list.stdout, "remote rshell ("+addr+")") {
		t.Fatalf("tools list: exit %d %q %q", list.code, list.stdout, list.stderr)
	}

	// Two hosts at once, each in its own work dir: the server's Shell runs
	// in the work dir each host's Environment capability reports, once the
	// host's Approval capability approved the command.
	work := []string{t.TempDir(), t.TempDir()}
	results := make([]result, len(work))
	var wg sync.WaitGroup
	for i, w := range work {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runHost(t, w, "", "--agent", agentPath, "tools", "call", "--yolo", "Shell", `{"command":"pwd -P; sleep 0.2; pwd -P"}`)
		}()
	}
	wg.Wait()
	for i, r := range results {
		want, _ := filepath.EvalSymlinks(work[i])
		if r.code != 0 || r.stdout != want+"\n"+want+"\n" {
			t.Errorf("host %d: exit %d stdout %q stderr %q, want %s twice", i, r.code, r.stdout, r.stderr, want)
		}
	}

	// The agent loop calls the remote tool as it calls a local one.
	script := filepath.Join(work[1], "script.yaml")
	if err := os.WriteFile(script, []byte("turns:\n  - tool_calls: [{id: s1, name: Shell, arguments: {command: \"echo remote; pwd -P\"}}]\n"+
		"  - text: done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := runHost(t, work[1], "", "--agent", agentPath, "run", "--provider", "scripted", "--script", script,
		"--yolo", "--output-format", "stream-json", "-p", "Where are you?")
	wantOut, _ := filepath.EvalSymlinks(work[1])
	found := false
	for _, line := range strings.Split(strings.TrimSpace(run.stdout), "\n") {
		var ev struct{ Type, ID, Status, Output string }
		if err := json.Unmarshal([]byte(line), &ev); err == nil && ev.Type == "tool_result" && ev.ID == "s1" {
			found = ev.Status == "ok" && ev.Output == "remote\n"+wantOut+"\n"
		}
	}
	if run.code != 0 || !found {
		t.Fatalf("run: exit %d, no tool result with the work dir\n%s\n%s", run.code, run.stdout, run.stderr)
	}

	// Without --yolo nobody approves: the refusal comes back across the connection.
	denied := runHost(t, work[0], "", "--agent", agentPath, "tools", "call", "Shell", `{"command":"touch nope"}`)
	if denied.code != 1 || !strings.Contains(denied.stderr, "rejected") || fileExists(filepath.Join(work[0], "nope")) {
		t.Fatalf("unapproved call: exit %d %q %q", denied.code, denied.stdout, denied.stderr)
	}
}

func TestRemoteBadInput(t *testing.T) {
	dir := writeFiles(t, map[string]string{"s.md": "x",
		"agent.yaml": strings.Replace(remoteAgent, "ADDR", "127.0.0.1:1", 1)})
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"serve without --listen", []string{"plugins", "serve", "shell"}, 2, "plugins serve shell: --listen ADDR is required"},
		{"serve without certificates", []string{"plugins", "serve", "shell", "--listen", "127.0.0.1:0"}, 2,
			"plugins serve shell: --ca is required (mutual TLS needs the team CA, a server certificate and its key)"},
		{"serve a missing CA", []string{"plugins", "serve", "shell", "--listen", "127.0.0.1:0", "--ca", "none.pem", "--cert", "s.md", "--key", "s.md"}, 2,
			"plugins serve shell: --ca: stat none.pem: no such file or directory"},
		{"serve an unknown plugin", []string{"plugins", "serve", "nope", "--listen", ":0"}, 2, `no built-in plugin "nope"`},
		{"agent with missing certificates", []string{"--agent", "agent.yaml", "tools", "list"}, 2,
			"agent.yaml:6: remote tool server 127.0.0.1:1: TLS: CA: open " + filepath.Join(dir, "certs/ca.pem")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHost(t, dir, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("exit %d stderr %q, want %d with %q", r.code, r.stderr, tt.code, tt.want)
			}
		})
	}
	if r := runHost(t, dir, "", "plugins", "certs", "certs"); r.code != 0 {
		t.Fatalf("plugins certs: %d %q", r.code, r.stderr)
	}
	if r := runHost(t, dir, "", "plugins", "certs", "certs"); r.code != 1 || !strings.Contains(r.stderr, "ca.pem already exists: certificates are never overwritten") {
		t.Fatalf("plugins certs again: exit %d %q", r.code, r.stderr)
	}
}
