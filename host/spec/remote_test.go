package spec

import (
	"path/filepath"
	"strings"
	"testing"
)

func remoteAgent(entries string) map[string]string {
	return map[string]string{
		"sub/agent.yaml": "version: 1\nagent:\n  name: a\n  system_prompt_path: ./s.md\n  tools:\n" + entries,
		"sub/s.md":       "x",
	}
}

const remoteTLS = "      tls: {ca: certs/ca.pem, cert: certs/client.pem, key: certs/client-key.pem}\n"

func TestRemoteRef(t *testing.T) {
	s, dir, err := load(t, remoteAgent(
		"    - remote: tools.example.com:7443\n"+remoteTLS+"      tools: [RunQuery]\n      timeout: 30s\n"+
			"    - remote: 127.0.0.1:7000\n      name: shell\n"+
			"      tls: {ca: /etc/ca.pem, cert: c.pem, key: k.pem, server_name: tools.internal}\n"), "sub/agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refs, err := s.Plugins()
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 {
		t.Fatalf("refs: %+v", refs)
	}
	sub := filepath.Join(dir, "sub")
	want := RemoteRef{Addr: "tools.example.com:7443", Name: "tools.example.com", CA: filepath.Join(sub, "certs/ca.pem"),
		Cert: filepath.Join(sub, "certs/client.pem"), Key: filepath.Join(sub, "certs/client-key.pem")}
	if r := refs[0]; r.Remote == nil || *r.Remote != want || r.Name != "tools.example.com" || r.Path != "" || r.Lookup != "" ||
		len(r.Tools) != 1 || r.Tools[0] != "RunQuery" || r.Timeout.String() != "30s" {
		t.Errorf("first: %+v %+v", r, r.Remote)
	}
	want = RemoteRef{Addr: "127.0.0.1:7000", Name: "shell", CA: "/etc/ca.pem", Cert: filepath.Join(sub, "c.pem"),
		Key: filepath.Join(sub, "k.pem"), ServerName: "tools.internal"}
	if r := refs[1]; r.Remote == nil || *r.Remote != want || r.Name != "shell" || r.Tools != nil {
		t.Errorf("second: %+v %+v", r, r.Remote)
	}
}

func TestRemoteRefErrors(t *testing.T) {
	tests := []struct {
		name, entries, want string
	}{
		{"no port", "    - remote: tools.example.com\n" + remoteTLS,
			`sub/agent.yaml:6: tools entry: invalid remote "tools.example.com" (want HOST:PORT, e.g. tools.example.com:7443)`},
		{"bad port", "    - remote: h:99999\n" + remoteTLS, `invalid remote "h:99999"`},
		{"no tls", "    - remote: h:7000\n",
			"sub/agent.yaml:6: tools entry: remote tool server h:7000 needs tls: {ca, cert, key} (mutual TLS is required)"},
		{"tls without key", "    - remote: h:7000\n      tls: {ca: ca.pem, cert: c.pem}\n",
			"sub/agent.yaml:7: tools entry: tls: key required (mutual TLS needs the team CA, a client certificate and its key)"},
		{"unknown tls key", "    - remote: h:7000\n      tls: {ca: a, cert: c, key: k, insecure: true}\n",
			`unknown key "insecure" in tools entry: tls (known keys: ca, cert, key, server_name)`},
		{"empty tls path", "    - remote: h:7000\n      tls: {ca: '', cert: c, key: k}\n", "tools entry: tls: ca must not be empty"},
		{"plugin and remote", "    - plugin: echo\n      remote: h:7000\n" + remoteTLS,
			"tools entry: plugin and remote are exclusive"},
		{"tls on a plugin", "    - plugin: echo\n" + remoteTLS, `tls belong to a remote tool server (remote: HOST:PORT), not to plugin "echo"`},
		{"tls alone", "    - tls: {ca: a, cert: c, key: k}\n", "tools entry: plugin or remote is required"},
		{"sha256", "    - remote: h:7000\n      sha256: " + strings.Repeat("a", 64) + "\n" + remoteTLS,
			"sha256 pins a plugin binary; remote tool server h:7000 has none"},
		{"env", "    - remote: h:7000\n      env: [HOME]\n" + remoteTLS, "env names variables a launched plugin inherits"},
		{"bad tool", "    - remote: h:7000\n" + remoteTLS + "      tools: ['a b']\n", `tools entry "h:a b": invalid tool name "a b"`},
		{"bad name", "    - remote: h:7000\n      name: 'a b'\n" + remoteTLS, `invalid name "a b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := load(t, remoteAgent(tt.entries), "sub/agent.yaml", LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v\nwant one line with %q", err, tt.want)
			}
		})
	}
}

func TestRemoteRefsToOneServerMustAgree(t *testing.T) {
	s, _, err := load(t, remoteAgent("    - remote: h:7000\n"+remoteTLS+"      tools: [A]\n"+
		"    - remote: h:7000\n      tls: {ca: other.pem, cert: certs/client.pem, key: certs/client-key.pem}\n      tools: [B]\n"),
		"sub/agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Plugins()
	if err == nil || !strings.Contains(err.Error(), `sub/agent.yaml:9: plugin "h": name or tls conflicts with the reference at`) {
		t.Fatalf("err = %v", err)
	}
	same, _, err := load(t, remoteAgent("    - remote: h:7000\n"+remoteTLS+"      tools: [A]\n    - remote: h:7000\n"+remoteTLS+"      tools: [B]\n"),
		"sub/agent.yaml", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refs, err := same.Plugins()
	if err != nil || len(refs) != 1 || strings.Join(refs[0].Tools, ",") != "A,B" {
		t.Fatalf("refs %+v, err %v", refs, err)
	}
}
