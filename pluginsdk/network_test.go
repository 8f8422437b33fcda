package pluginsdk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNetworkFromArgs(t *testing.T) {
	env := map[string]string{"KOSONG_PLUGIN_LISTEN": ":9000", "KOSONG_PLUGIN_CA": "/env/ca.pem"}
	getenv := func(k string) string { return env[k] }
	none := func(string) string { return "" }
	tests := []struct {
		name   string
		args   []string
		getenv func(string) string
		want   Network
		ok     bool
		err    string
	}{
		{name: "launched by a host", getenv: none},
		{name: "flags", args: []string{"--listen", ":7443", "--ca", "ca.pem", "--cert", "s.pem", "--key", "k.pem"}, getenv: none,
			want: Network{Listen: ":7443", CA: "ca.pem", Cert: "s.pem", Key: "k.pem"}, ok: true},
		{name: "environment", getenv: getenv, want: Network{Listen: ":9000", CA: "/env/ca.pem"}, ok: true},
		{name: "flags win", args: []string{"--ca", "flag.pem"}, getenv: getenv, want: Network{Listen: ":9000", CA: "flag.pem"}, ok: true},
		{name: "unknown flag", args: []string{"--port", "1"}, getenv: none, err: "plugin arguments: flag provided but not defined: -port"},
		{name: "stray argument", args: []string{"--listen", ":1", "extra"}, getenv: none, err: `plugin arguments: unexpected "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok, err := NetworkFromArgs(tt.args, tt.getenv)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || ok != tt.ok || n.Listen != tt.want.Listen || n.CA != tt.want.CA || n.Cert != tt.want.Cert || n.Key != tt.want.Key {
				t.Fatalf("got %+v %v %v, want %+v %v", n, ok, err, tt.want, tt.ok)
			}
		})
	}
}

func TestNetworkArgs(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"plugin-serve", "echo"}, false},
		{[]string{"-test.paniconexit0", "-test.run", "X"}, false},
		{[]string{"--listen", ":1", "--ca", "c"}, true},
		{[]string{"--ca", "c", "-listen=:1"}, true},
	} {
		if got := networkArgs(tt.args) != nil; got != tt.want {
			t.Errorf("%q: %v", tt.args, got)
		}
	}
}

func TestServeNetworkRefusesBadCertificates(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	defs := []Definition{NewRawTool("A", "a", []byte(`{}`), func() (RawHandlerFunc, error) { return nil, nil })}
	tests := []struct {
		name string
		n    Network
		want string
	}{
		{"no certificates", Network{Listen: "127.0.0.1:0"}, "TLS: ca, cert, key not given"},
		{"missing CA", Network{Listen: "127.0.0.1:0", CA: filepath.Join(dir, "none.pem"), Cert: junk, Key: junk}, "TLS: CA: open"},
		{"CA not PEM", Network{Listen: "127.0.0.1:0", CA: junk, Cert: junk, Key: junk}, "holds no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ServeNetwork(tt.n, defs...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
