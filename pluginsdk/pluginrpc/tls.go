package pluginrpc

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// keyExchanges are the TLS 1.3 key exchange groups host and plugin accept,
// in order of preference.
var keyExchanges = []tls.CurveID{tls.X25519, tls.CurveP256}

// TLSBundle is the one-time TLS material the host mints for one plugin and
// hands it over an inherited file descriptor (never the command line or the
// environment): the plugin's certificate and key, and the host's certificate
// to trust. Both certificates are self-signed ECDSA P-256 certificates for
// "localhost", valid for this run only.
type TLSBundle struct {
	CertPEM     []byte `json:"cert_pem"`
	KeyPEM      []byte `json:"key_pem"`
	PeerCertPEM []byte `json:"peer_cert_pem"`
}

// Config returns a tls.Config usable both as a server and as a client
// (go-plugin's broker dials in both directions): it presents CertPEM and
// trusts only PeerCertPEM, requiring it from clients.
func (b TLSBundle) Config() (*tls.Config, error) {
	cert, err := tls.X509KeyPair(b.CertPEM, b.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("plugin TLS: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.PeerCertPEM) {
		return nil, errors.New("plugin TLS: peer certificate is not valid PEM")
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ServerName:   "localhost",
		MinVersion:   tls.VersionTLS13,
		// X25519 first (what Go peers agree on in one round trip), then
		// P-256, the only group gRPC's C core (Python's, Ruby's, C++'s gRPC)
		// offers: a plugin in those languages uses its gRPC's own TLS, as
		// client and as server. The hybrid post-quantum exchange Go prefers
		// by default costs more than it protects on a one-time, same-machine
		// connection.
		CurvePreferences: keyExchanges,
	}, nil
}

// TLSFromEnv reads the TLSBundle from the inherited descriptor named by
// TLSFDEnv and returns its tls.Config. It returns nil, nil when the variable
// is not set (the host runs the plugin without its own TLS material).
func TLSFromEnv() (*tls.Config, error) {
	fdText := os.Getenv(TLSFDEnv)
	if fdText == "" {
		return nil, nil
	}
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("plugin TLS: %s=%q is not an inherited file descriptor", TLSFDEnv, fdText)
	}
	f := os.NewFile(uintptr(fd), "kosong-tls")
	if f == nil {
		return nil, fmt.Errorf("plugin TLS: descriptor %d is not open", fd)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("plugin TLS: read descriptor %d: %w", fd, err)
	}
	var b TLSBundle
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("plugin TLS: decode bundle: %w", err)
	}
	return b.Config()
}
