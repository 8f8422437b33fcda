package plugin

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
)

// handshakeState runs a TLS handshake between a client and a server config
// over loopback TCP and returns the client's view of the connection. (A
// retried handshake, as when the client's key share is not one the server
// takes, needs the socket's buffering: net.Pipe would deadlock.)
func handshakeState(t *testing.T, client, server *tls.Config) (tls.ConnectionState, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errc := make(chan error, 1)
	go func() {
		s, err := ln.Accept()
		if err != nil {
			errc <- err
			return
		}
		err = tls.Server(s, server).Handshake()
		s.Close()
		errc <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(c, client)
	cerr := tc.Handshake()
	st := tc.ConnectionState()
	c.Close()
	serr := <-errc
	if cerr != nil {
		return st, cerr
	}
	return st, serr
}

// TestKeyExchanges: the host's and the Go SDK's TLS settle on X25519 with
// each other, and accept a peer that offers only P-256 (gRPC's C core, which
// Python's, Ruby's and C++'s gRPC wrap) in every direction: the host dialling
// the plugin, the plugin dialling the host's capability server, as either
// side. TLS 1.3 only and mutual authentication stay.
func TestKeyExchanges(t *testing.T) {
	hostCfg, bundle, err := NewTLS("py")
	if err != nil {
		t.Fatal(err)
	}
	pluginCfg, err := bundle.Config()
	if err != nil {
		t.Fatal(err)
	}
	// with is cfg as a peer in another language would set it up.
	with := func(cfg *tls.Config, edit func(*tls.Config)) *tls.Config {
		c := cfg.Clone()
		edit(c)
		return c
	}
	onlyP256 := func(c *tls.Config) { c.CurvePreferences = []tls.CurveID{tls.CurveP256} }
	onlyX25519 := func(c *tls.Config) { c.CurvePreferences = []tls.CurveID{tls.X25519} }
	tls12 := func(c *tls.Config) { c.MinVersion, c.MaxVersion = tls.VersionTLS12, tls.VersionTLS12; onlyP256(c) }
	noCert := func(c *tls.Config) { c.Certificates = nil; onlyP256(c) }
	tests := []struct {
		name           string
		client, server *tls.Config
		curve          tls.CurveID
		wantErr        string
	}{
		{"go host dials go plugin", hostCfg, pluginCfg, tls.X25519, ""},
		{"go plugin dials go host", pluginCfg, hostCfg, tls.X25519, ""},
		{"host dials a P-256 plugin", hostCfg, with(pluginCfg, onlyP256), tls.CurveP256, ""},
		{"P-256 plugin dials the host's capability server", with(pluginCfg, onlyP256), hostCfg, tls.CurveP256, ""},
		{"go plugin dials a P-256 host", pluginCfg, with(hostCfg, onlyP256), tls.CurveP256, ""},
		{"P-256 host dials a go plugin", with(hostCfg, onlyP256), pluginCfg, tls.CurveP256, ""},
		{"X25519-only plugin dials the host", with(pluginCfg, onlyX25519), hostCfg, tls.X25519, ""},
		{"TLS 1.2 plugin refused by the host", with(pluginCfg, tls12), hostCfg, 0, "protocol version"},
		{"host refuses a TLS 1.2 plugin server", hostCfg, with(pluginCfg, tls12), 0, "protocol version"},
		{"P-256 plugin without a certificate refused", with(pluginCfg, noCert), hostCfg, 0, "certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, err := handshakeState(t, tt.client, tt.server)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Version != tls.VersionTLS13 || st.CurveID != tt.curve {
				t.Fatalf("version %x curve %v, want TLS 1.3 with %v", st.Version, st.CurveID, tt.curve)
			}
		})
	}
}
