package plugin

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// identity is a one-time self-signed ECDSA P-256 certificate for
// "localhost". P-256 keeps mutual TLS cheap: minting and handshakes cost a
// fraction of go-plugin's AutoMTLS P-521 keys, and unlike Ed25519 its
// precomputed tables ship in the binary, so a freshly started plugin does not
// spend its first handshake building them (about 0.9 ms of a plugin's start).
type identity struct {
	certPEM, keyPEM []byte
	cert            tls.Certificate
}

func newIdentity(name string) (*identity, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"kosong-host " + name}},
		DNSNames:              []string{"localhost"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	id := &identity{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	id.cert, err = tls.X509KeyPair(id.certPEM, id.keyPEM)
	if err != nil {
		return nil, err
	}
	return id, nil
}

var (
	hostIdentityOnce sync.Once
	hostIdentity     *identity
	hostIdentityErr  error
)

// NewTLS mints a child's one-time identity and returns the host's TLS config
// that trusts only it, and the bundle to hand the child (see
// pluginrpc.TLSBundle).
func NewTLS(name string) (*tls.Config, pluginrpc.TLSBundle, error) {
	hostIdentityOnce.Do(func() { hostIdentity, hostIdentityErr = newIdentity("host") })
	if hostIdentityErr != nil {
		return nil, pluginrpc.TLSBundle{}, fmt.Errorf("mint host certificate: %w", hostIdentityErr)
	}
	pid, err := newIdentity(name)
	if err != nil {
		return nil, pluginrpc.TLSBundle{}, fmt.Errorf("mint plugin certificate: %w", err)
	}
	hostSide := pluginrpc.TLSBundle{CertPEM: hostIdentity.certPEM, KeyPEM: hostIdentity.keyPEM, PeerCertPEM: pid.certPEM}
	cfg, err := hostSide.Config()
	if err != nil {
		return nil, pluginrpc.TLSBundle{}, err
	}
	return cfg, pluginrpc.TLSBundle{CertPEM: pid.certPEM, KeyPEM: pid.keyPEM, PeerCertPEM: hostIdentity.certPEM}, nil
}
