package pins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := PathFor(filepath.Join(dir, "agent.yaml"))
	if filepath.Base(path) != "agent.lock.yaml" {
		t.Fatalf("lock path %s", path)
	}
	f, err := Read(path)
	if err != nil || len(f.Plugins) != 0 {
		t.Fatalf("missing lock: %v %v", f, err)
	}
	want := &File{Version: 1, Plugins: map[string]Pin{"echo": {Path: "/bin/x", SHA256: strings.Repeat("ab", 32)}},
		MCPServers: map[string]Pin{"files": {Path: "tools/server", SHA256: strings.Repeat("cd", 32)}}}
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil || got.Plugins["echo"] != want.Plugins["echo"] || got.MCPServers["files"] != want.MCPServers["files"] {
		t.Fatalf("read back %+v %v", got, err)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"unknown key", "version: 1\nplugins: {}\nextra: 1\n", "field extra not found"},
		{"bad version", "version: 2\nplugins: {}\n", "unsupported lock file version 2"},
		{"bad pin", "version: 1\nplugins:\n  echo: {sha256: XYZ}\n", "plugin echo: sha256 must be 64 lowercase hex digits"},
		{"bad MCP pin", "version: 1\nplugins: {}\nmcp_servers:\n  files: {sha256: " + strings.Repeat("AB", 32) + "}\n",
			"MCP server files: sha256 must be 64 lowercase hex digits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agent.lock.yaml")
			os.WriteFile(path, []byte(tt.body), 0o644)
			_, err := Read(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestFileSHA256(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("abc"), 0o644)
	if got, err := FileSHA256(path); err != nil || got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("sha256 = %s, %v", got, err)
	}
	if _, err := FileSHA256(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing file has no sha256")
	}
}
