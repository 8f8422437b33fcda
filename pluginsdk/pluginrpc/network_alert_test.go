package pluginrpc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T, name string) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return testCA{cert: cert, key: key, pool: pool}
}

// leaf is a certificate for 127.0.0.1 signed by the CA, for a server or a
// client.
func (ca testCA) leaf(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "leaf"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestRefusalSeenAsFailedWrite: a server refuses the host's certificate
// after the TLS 1.3 handshake completed on the host's side, and closes; the
// host's writes fail ("broken pipe") before anything reads the server's
// alert. The connection still says the server refused the certificate.
func TestRefusalSeenAsFailedWrite(t *testing.T) {
	serverCA, otherCA := newTestCA(t, "team"), newTestCA(t, "other")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	refused := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			refused <- err
			return
		}
		s := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{serverCA.leaf(t)}, MinVersion: tls.VersionTLS13,
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: serverCA.pool})
		refused <- s.Handshake()
		_ = c.Close()
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client := tls.Client(raw, &tls.Config{RootCAs: serverCA.pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13,
		Certificates: []tls.Certificate{otherCA.leaf(t)}})
	t.Cleanup(func() { _ = client.Close() })
	if err := client.Handshake(); err != nil {
		t.Fatalf("the host's side of the handshake: %v", err)
	}
	if err := <-refused; err == nil {
		t.Fatal("the server accepted a certificate from another CA")
	}
	rec := &recordingConn{Conn: client}
	var werr error
	for deadline := time.Now().Add(30 * time.Second); werr == nil && time.Now().Before(deadline); {
		_, werr = rec.Write(make([]byte, 1024))
	}
	if werr == nil {
		t.Fatal("writes to the closed connection never failed")
	}
	_ = rec.Close()
	got := (&NetworkConn{raw: rec}).Failure()
	if !strings.HasPrefix(got, "the server refused this host's certificate (tls.cert is not signed by a CA it trusts): remote error: tls:") {
		t.Fatalf("failure %q after the write error %v", got, werr)
	}
	t.Logf("write: %v; failure: %s", werr, got)
}
