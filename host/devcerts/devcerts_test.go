package devcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMintChainsToTheCA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	written, err := Mint(dir, Options{Hosts: []string{"tools.example.com", "10.0.0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != len(Files) {
		t.Fatalf("wrote %v", written)
	}
	caPEM, _ := os.ReadFile(filepath.Join(dir, CAFile))
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.pem")
	}
	for _, tt := range []struct {
		cert, key string
		usage     x509.ExtKeyUsage
		names     []string
	}{
		{ServerFile, ServerKeyFile, x509.ExtKeyUsageServerAuth, []string{"127.0.0.1", "::1", "localhost", "tools.example.com", "10.0.0.5"}},
		{ClientFile, ClientKeyFile, x509.ExtKeyUsageClientAuth, []string{""}},
	} {
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, tt.cert), filepath.Join(dir, tt.key))
		if err != nil {
			t.Fatal(err)
		}
		leaf := pair.Leaf
		if k, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok || k.Curve != elliptic.P256() {
			t.Errorf("%s: key %T, want ECDSA P-256", tt.cert, leaf.PublicKey)
		}
		for _, name := range tt.names {
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{tt.usage}}); err != nil {
				t.Errorf("%s for %q: %v", tt.cert, name, err)
			}
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "elsewhere.example.com", KeyUsages: []x509.ExtKeyUsage{tt.usage}}); tt.cert == ServerFile && err == nil {
			t.Error("the server certificate is valid for a host not given")
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, ServerKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("server key mode: %v %v", fi.Mode(), err)
	}
}

func TestMintNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ClientKeyFile), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Mint(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "client-key.pem already exists: certificates are never overwritten") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ClientKeyFile)); string(b) != "mine" {
		t.Error("the existing key was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, CAFile)); err == nil {
		t.Error("a CA was written beside the refused file")
	}
}
