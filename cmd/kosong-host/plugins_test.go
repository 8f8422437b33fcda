package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if err != nil || !strings.Contains(string(lock), "kosong-plugin-echo:") {
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
	if r := runHost(t, dir, "", "plugins", "verify"); r.code != 1 || !strings.Contains(r.stdout, "MISMATCH: lock file pins") {
		t.Fatalf("verify after tampering: %+v", r)
	}
	if r := runHost(t, dir, "", "tools", "call", "Echo", `{"text":"x"}`); r.code != 2 || !strings.Contains(r.stderr, "sha256 mismatch for ") {
		t.Fatalf("call after tampering: %+v", r)
	}
}
