package pins

import (
	"os"
	"path/filepath"
	"reflect"
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
	here := PlatformPin{Manifest: "sha256:" + strings.Repeat("01", 32), SHA256: strings.Repeat("02", 32)}
	there := PlatformPin{Manifest: "sha256:" + strings.Repeat("03", 32), SHA256: strings.Repeat("04", 32)}
	want := &File{Version: 1, Plugins: map[string]Pin{
		"echo":  {Path: "/bin/x", SHA256: strings.Repeat("ab", 32)},
		"shell": {Builtin: "v1.2.3"},
		"greet": {Source: "oci://ghcr.io/team/greet", Version: "1.2.0", Index: "sha256:" + strings.Repeat("ef", 32),
			Platforms: map[string]PlatformPin{Platform: {Manifest: here.Manifest, SHA256: here.SHA256}, "plan9/mips": {Manifest: there.Manifest, SHA256: there.SHA256}}},
	},
		MCPServers: map[string]Pin{"files": {Path: "tools/server", SHA256: strings.Repeat("cd", 32)}}}
	if err := Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	// Reading fills an OCI pin's sha256 with this platform's binary's.
	g := want.Plugins["greet"]
	g.SHA256 = here.SHA256
	want.Plugins["greet"] = g
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v %v\nwant %+v", got, err, want)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"unknown key", "version: 1\nplugins: {}\nextra: 1\n", "field extra not found"},
		{"bad version", "version: 2\nplugins: {}\n", "unsupported lock file version 2"},
		{"bad pin", "version: 1\nplugins:\n  echo: {sha256: XYZ}\n", "plugin echo: sha256 must be 64 lowercase hex digits"},
		{"OCI pin without platforms", "version: 1\nplugins:\n  greet: {source: oci://x/y, index: sha256:" + strings.Repeat("ab", 32) + "}\n", "plugin greet: no platforms"},
		{"OCI pin with a bad index", "version: 1\nplugins:\n  greet: {source: oci://x/y, index: abc}\n", "plugin greet: index must be"},
		{"OCI pin with a bad platform", "version: 1\nplugins:\n  greet: {source: oci://x/y, index: sha256:" + strings.Repeat("ab", 32) + ", platforms: {linux/amd64: {manifest: x, sha256: y}}}\n", "platform linux/amd64: want"},
		{"built-in with sha256", "version: 1\nplugins:\n  shell: {builtin: v1, sha256: " + strings.Repeat("ab", 32) + "}\n", "pinned by the host's version"},
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
