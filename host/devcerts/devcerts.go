// Package devcerts mints a development CA and the server and client
// certificates of remote tool servers (`kosong-host plugins certs`): ECDSA
// P-256, the server's certificate valid for 127.0.0.1, ::1, localhost and
// the hosts given.
package devcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files Mint writes, in DIR.
const (
	CAFile         = "ca.pem"
	CAKeyFile      = "ca-key.pem"
	ServerFile     = "server.pem"
	ServerKeyFile  = "server-key.pem"
	ClientFile     = "client.pem"
	ClientKeyFile  = "client-key.pem"
	validFor       = 365 * 24 * time.Hour
	defaultClient  = "kosong-host"
	defaultCAName  = "kosong-host development CA"
	defaultSubject = "kosong tool server"
)

// Files lists every file Mint writes.
var Files = []string{CAFile, CAKeyFile, ServerFile, ServerKeyFile, ClientFile, ClientKeyFile}

// Options say what to mint.
type Options struct {
	// Hosts are extra names or IP addresses of the server.
	Hosts []string
	// Client is the client certificate's common name; "" = "kosong-host".
	Client string
}

// Mint writes a new CA, a server and a client certificate with their keys
// into dir (created if need be) and returns the paths written. It refuses
// to overwrite any of them.
func Mint(dir string, opts Options) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, f := range Files {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return nil, fmt.Errorf("%s already exists: certificates are never overwritten (choose another folder or remove them)", filepath.Join(dir, f))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if opts.Client == "" {
		opts.Client = defaultClient
	}
	now := time.Now().Add(-time.Minute)
	caKey, caDER, err := mint(&x509.Certificate{
		Subject:               pkix.Name{CommonName: defaultCAName},
		NotBefore:             now,
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}, nil, nil)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: defaultSubject},
		NotBefore:   now,
		NotAfter:    now.Add(validFor),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, h := range opts.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			server.IPAddresses = append(server.IPAddresses, ip)
		} else if h != "" {
			server.DNSNames = append(server.DNSNames, h)
		}
	}
	serverKey, serverDER, err := mint(server, ca, caKey)
	if err != nil {
		return nil, err
	}
	clientKey, clientDER, err := mint(&x509.Certificate{
		Subject:     pkix.Name{CommonName: opts.Client},
		NotBefore:   now,
		NotAfter:    now.Add(validFor),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, f := range []struct {
		name  string
		block *pem.Block
		mode  os.FileMode
	}{
		{CAFile, certBlock(caDER), 0o644},
		{CAKeyFile, keyBlock(caKey), 0o600},
		{ServerFile, certBlock(serverDER), 0o644},
		{ServerKeyFile, keyBlock(serverKey), 0o600},
		{ClientFile, certBlock(clientDER), 0o644},
		{ClientKeyFile, keyBlock(clientKey), 0o600},
	} {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, pem.EncodeToMemory(f.block), f.mode); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// mint creates a P-256 key and a certificate for it from tmpl, signed by
// parent (self-signed when parent is nil).
func mint(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("mint %s: %w", tmpl.Subject.CommonName, err)
	}
	return key, der, nil
}

func certBlock(der []byte) *pem.Block { return &pem.Block{Type: "CERTIFICATE", Bytes: der} }

func keyBlock(k *ecdsa.PrivateKey) *pem.Block {
	der, _ := x509.MarshalPKCS8PrivateKey(k) // cannot fail for a P-256 key
	return &pem.Block{Type: "PRIVATE KEY", Bytes: der}
}
