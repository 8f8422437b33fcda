package trust_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/trust"
)

func write(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

const agentYAML = `version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools: ["./bin/plug:Mark"]
  hooks:
    - {event: SessionStart, command: "sh ./hook.sh"}
  mcp_servers:
    m: {command: ./mcp.sh, args: [./data.txt, --flag]}
  permissions:
    allow: ["Shell(*)"]
  subagents:
    sub: {path: ./sub.yaml, description: d}
`

// project writes a folder with an agent file that pulls in every kind of
// project file, and returns the folder.
func project(t *testing.T) string {
	t.Helper()
	dir, err := trust.Folder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "agent.yaml"), agentYAML, 0o644)
	write(t, filepath.Join(dir, "s.md"), "hi", 0o644)
	write(t, filepath.Join(dir, "bin/plug"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "hook.sh"), "touch x\n", 0o755)
	write(t, filepath.Join(dir, "mcp.sh"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, "data.txt"), "d", 0o644)
	write(t, filepath.Join(dir, "sub.yaml"), "version: 1\nagent:\n  name: sub\n  system_prompt_path: ./s.md\n  tools: [\"./bin/subplug:X\"]\n", 0o644)
	write(t, filepath.Join(dir, "bin/subplug"), "#!/bin/sh\n", 0o755)
	write(t, filepath.Join(dir, ".env"), "OPENAI_BASE_URL=http://127.0.0.1:1/v1\nSECRET=value-never-shown\n", 0o644)
	return dir
}

// TestScanDigest: the digest changes when any project file changes, and
// only then.
func TestScanDigest(t *testing.T) {
	tests := []struct {
		name   string
		change func(dir string)
		same   bool
	}{
		{"nothing", func(string) {}, true},
		{"a file outside the project files", func(dir string) { write(t, filepath.Join(dir, "README"), "x", 0o644) }, true},
		{"the system prompt (text, runs nothing)", func(dir string) { write(t, filepath.Join(dir, "s.md"), "other", 0o644) }, true},
		{"agent file", func(dir string) {
			write(t, filepath.Join(dir, "agent.yaml"), strings.Replace(agentYAML, "Shell(*)", "Shell(ls *)", 1), 0o644)
		}, false},
		{"subagent spec", func(dir string) {
			write(t, filepath.Join(dir, "sub.yaml"), "version: 1\nagent:\n  name: other\n  system_prompt_path: ./s.md\n", 0o644)
		}, false},
		{"plugin binary", func(dir string) { write(t, filepath.Join(dir, "bin/plug"), "#!/bin/sh\nrm -rf ~\n", 0o755) }, false},
		{"subagent's plugin binary", func(dir string) { write(t, filepath.Join(dir, "bin/subplug"), "changed", 0o755) }, false},
		{"hook script", func(dir string) { write(t, filepath.Join(dir, "hook.sh"), "changed", 0o755) }, false},
		{"MCP command", func(dir string) { write(t, filepath.Join(dir, "mcp.sh"), "changed", 0o755) }, false},
		{"MCP argument file", func(dir string) { write(t, filepath.Join(dir, "data.txt"), "changed", 0o644) }, false},
		{".env", func(dir string) { write(t, filepath.Join(dir, ".env"), "OPENAI_BASE_URL=http://evil/v1\n", 0o644) }, false},
		{"lock file appears", func(dir string) { write(t, filepath.Join(dir, "agent.lock.yaml"), "version: 1\n", 0o644) }, false},
		{"plugin binary removed", func(dir string) { os.Remove(filepath.Join(dir, "bin/plug")) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := project(t)
			before := trust.Scan(dir, trust.ScanOptions{AgentFile: "agent.yaml"})
			tt.change(dir)
			after := trust.Scan(dir, trust.ScanOptions{AgentFile: "agent.yaml"})
			if (before.Digest == after.Digest) != tt.same {
				t.Fatalf("digest same=%v, want %v\nbefore %v\nafter  %v", before.Digest == after.Digest, tt.same, before.Files, after.Files)
			}
		})
	}
}

// TestScanDescribe: the description lists what would run and the .env
// variable names, never their values.
func TestScanDescribe(t *testing.T) {
	dir := project(t)
	p := trust.Scan(dir, trust.ScanOptions{AgentFile: "agent.yaml"})
	var b bytes.Buffer
	p.Describe(&b)
	out := b.String()
	for _, want := range []string{
		"plugin:      bin/plug", "plugin:      bin/subplug", "hook:        SessionStart: sh ./hook.sh",
		"MCP server:  m: " + filepath.Join(dir, "mcp.sh") + " ./data.txt --flag", "allow rule:  Shell(*)",
		".env sets:   OPENAI_BASE_URL, SECRET", "file:        agent.yaml", "file:        sub.yaml", "file:        .env",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("description lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "value-never-shown") || strings.Contains(out, "127.0.0.1") {
		t.Errorf("description shows a .env value:\n%s", out)
	}
	if got := p.Ignored(true); got != "./agent.yaml and .env" {
		t.Errorf("Ignored(true) = %q", got)
	}
	if got := p.Ignored(false); got != ".env" {
		t.Errorf("Ignored(false) = %q", got)
	}
}

// TestScanBrokenAgent: an agent file that cannot be loaded is a note, and
// still digested.
func TestScanBrokenAgent(t *testing.T) {
	dir, _ := trust.Folder(t.TempDir())
	write(t, filepath.Join(dir, "agent.yaml"), "version: 1\nagent: [\n", 0o644)
	p := trust.Scan(dir, trust.ScanOptions{AgentFile: "agent.yaml"})
	if len(p.Problems) != 1 || !strings.Contains(p.Problems[0], "cannot be loaded") || strings.Contains(p.Problems[0], "\n") {
		t.Fatalf("problems %q", p.Problems)
	}
	write(t, filepath.Join(dir, "agent.yaml"), "version: 1\nagent: [x\n", 0o644)
	if trust.Scan(dir, trust.ScanOptions{AgentFile: "agent.yaml"}).Digest == p.Digest {
		t.Fatal("digest unchanged by an edit of a broken agent file")
	}
	if empty := trust.Scan(t.TempDir(), trust.ScanOptions{}); !empty.Empty() {
		t.Fatalf("empty folder: %+v", empty)
	}
}

// TestStore: trust, look up, list, revoke; the file is 0600.
func TestStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "kosong-host", "trust.json")
	s := &trust.Store{Path: path}
	if ok, err := s.Trusted("/a", "sha256:1"); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	for _, f := range []string{"/b", "/a"} {
		if err := s.Trust(f, "sha256:1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Trust("/a", "sha256:2"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Trusted("/a", "sha256:1"); ok {
		t.Fatal("old digest still trusted")
	}
	if ok, _ := s.Trusted("/a", "sha256:2"); !ok {
		t.Fatal("new digest not trusted")
	}
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].Folder != "/a" || list[1].Folder != "/b" || list[0].TrustedAt.IsZero() {
		t.Fatalf("list %+v %v", list, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("store mode: %v %v", st, err)
	}
	if was, err := s.Revoke("/a"); !was || err != nil {
		t.Fatalf("revoke: %v %v", was, err)
	}
	if was, err := s.Revoke("/a"); was || err != nil {
		t.Fatalf("second revoke: %v %v", was, err)
	}
	if ok, _ := s.Trusted("/a", "sha256:2"); ok {
		t.Fatal("revoked folder still trusted")
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".trust-*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

// TestStoreCorrupt: a store that cannot be read is a one-line error naming
// the file, for every operation, and is never overwritten.
func TestStoreCorrupt(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"not JSON", "{\"folders\": [\n", "is not valid JSON"},
		{"wrong type", `{"version": 1, "folders": {"a": 1}}`, "is not valid JSON"},
		{"other version", `{"version": 9, "folders": []}`, "unsupported version 9"},
		{"relative folder", `{"version": 1, "folders": [{"folder": "rel", "digest": "sha256:1"}]}`, "entry 1"},
		{"no digest", `{"version": 1, "folders": [{"folder": "/a"}]}`, "entry 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trust.json")
			write(t, path, tt.body, 0o600)
			s := &trust.Store{Path: path}
			check := func(op string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s: error %v, want one line naming %s and saying %q", op, err, path, tt.want)
				}
			}
			_, err := s.Trusted("/a", "sha256:1")
			check("Trusted", err)
			check("Trust", s.Trust("/a", "sha256:1"))
			_, err = s.Revoke("/a")
			check("Revoke", err)
			_, err = s.List()
			check("List", err)
			if b, _ := os.ReadFile(path); string(b) != tt.body {
				t.Errorf("store rewritten: %q", b)
			}
		})
	}
}

// TestFolder: symbolic links are resolved; a file or a missing path is an
// error.
func TestFolder(t *testing.T) {
	real, _ := trust.Folder(t.TempDir())
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if got, err := trust.Folder(link); err != nil || got != real {
		t.Fatalf("Folder(link) = %q %v, want %q", got, err, real)
	}
	write(t, filepath.Join(real, "f"), "", 0o644)
	for _, bad := range []string{filepath.Join(real, "f"), filepath.Join(real, "missing")} {
		if _, err := trust.Folder(bad); err == nil {
			t.Errorf("Folder(%s): no error", bad)
		}
	}
}

// TestDefaultPath: trust.json beside the sessions folder.
func TestDefaultPath(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/st", "HOME": "/h"}, "/st/kosong-host/trust.json"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/h"}, "/h/.local/state/kosong-host/trust.json"},
		{map[string]string{"HOME": "/h"}, "/h/.local/state/kosong-host/trust.json"},
	}
	for _, tt := range tests {
		got, err := trust.DefaultPath(func(k string) string { return tt.env[k] })
		if err != nil || got != tt.want {
			t.Errorf("%v: %q %v, want %q", tt.env, got, err, tt.want)
		}
	}
}
