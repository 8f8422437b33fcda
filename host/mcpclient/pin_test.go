package mcpclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/spec"
)

func TestCheckPin(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "server")
	if err := os.WriteFile(server, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	good, _ := pins.FileSHA256(server)
	other := strings.Repeat("0", 64)
	t.Setenv("PATH", dir)
	tests := []struct {
		name string
		cfg  spec.MCPServer
		pin  Pin
		want string // "" = started
	}{
		{"not pinned", spec.MCPServer{Name: "s", Command: server}, Pin{}, ""},
		{"pinned", spec.MCPServer{Name: "s", Command: server}, Pin{SHA256: good, LockFile: "a.lock.yaml"}, ""},
		{"a name in PATH", spec.MCPServer{Name: "s", Command: "server"}, Pin{SHA256: good}, ""},
		{"an HTTP server", spec.MCPServer{Name: "s", URL: "http://x"}, Pin{SHA256: other}, ""},
		{"another file", spec.MCPServer{Name: "s", Command: server}, Pin{SHA256: other, LockFile: "a.lock.yaml"},
			"MCP server s: sha256 mismatch for " + server + ": lock file a.lock.yaml pins " + other + ", the file is " + good +
				"; if the change is intended, run `kosong-host plugins lock`"},
		{"missing file", spec.MCPServer{Name: "s", Command: server + "2"}, Pin{SHA256: good}, "MCP server s: open " + server + "2: no such file or directory"},
		{"a name not in PATH", spec.MCPServer{Name: "s", Command: "nope"}, Pin{SHA256: good}, "MCP server s: nope: exec: \"nope\": executable file not found in $PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPin(tt.cfg, tt.pin)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || err.Error() != tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
