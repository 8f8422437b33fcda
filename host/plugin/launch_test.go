package plugin

import (
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/pins"
)

func TestCheckBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "exe")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("x"), 0o644)
	sum, _ := pins.FileSHA256(exe)
	tests := []struct {
		name, path, pin, want string
	}{
		{"ok", exe, "", ""},
		{"pinned ok", exe, strings.ToUpper(sum), ""},
		{"missing", filepath.Join(dir, "nope"), "", "binary not found: "},
		{"directory", dir, "", "is a directory, not a plugin binary"},
		{"not executable", text, "", "is not executable"},
		{"pin mismatch", exe, strings.Repeat("a", 64), "sha256 mismatch for " + exe + ": agent spec pins aaaa"},
		{"lock mismatch", exe, strings.Repeat("a", 64), "sha256 mismatch for " + exe + ": lock file " + dir + "/agent.lock.yaml pins " +
			strings.Repeat("a", 64) + ", the file is " + sum + "; if the change is intended, run `kosong-host plugins lock`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lock := ""
			if strings.HasPrefix(tt.name, "lock") {
				lock = filepath.Join(dir, "agent.lock.yaml")
			}
			err := checkBinary(tt.path, tt.pin, lock)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// handshake runs a TLS handshake between a client and a server config.
func handshake(client, server *tls.Config) error {
	c, s := net.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := tls.Server(s, server).Handshake()
		s.Close() // unblock the client if the server gave up
		errc <- err
	}()
	cerr := tls.Client(c, client).Handshake()
	c.Close() // unblock the server if the client gave up
	serr := <-errc
	if cerr != nil {
		return cerr
	}
	return serr
}

func TestMutualTLS(t *testing.T) {
	hostCfg, bundle, err := NewTLS("echo")
	if err != nil {
		t.Fatal(err)
	}
	pluginCfg, err := bundle.Config()
	if err != nil {
		t.Fatal(err)
	}
	// Both directions work: the host dials the plugin, the plugin dials the
	// host's brokered capability server.
	if err := handshake(hostCfg, pluginCfg); err != nil {
		t.Fatalf("host -> plugin: %v", err)
	}
	if err := handshake(pluginCfg, hostCfg); err != nil {
		t.Fatalf("plugin -> host: %v", err)
	}
	// Another plugin's certificate is not trusted by this plugin's host side.
	_, other, err := NewTLS("other")
	if err != nil {
		t.Fatal(err)
	}
	otherCfg, _ := other.Config()
	if err := handshake(otherCfg, hostCfg); err == nil {
		t.Fatal("a stranger's certificate was accepted")
	}
	// A client without a certificate is refused.
	noCert := &tls.Config{RootCAs: pluginCfg.ClientCAs, ServerName: "localhost", MinVersion: tls.VersionTLS13}
	if err := handshake(noCert, pluginCfg); err == nil {
		t.Fatal("a client without a certificate was accepted")
	}
}
