package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/kosong-host/kosong-host/host/mcpserver"
)

// DefaultListen is the address serve listens on.
const DefaultListen = "127.0.0.1:7433"

// ListenOptions say where and how the server listens.
type ListenOptions struct {
	// Addr is HOST:PORT, or a unix socket path (it holds a "/").
	Addr string
	// AllowRemote allows a non-loopback address; it needs TLS too.
	AllowRemote bool
	// TLSCert and TLSKey are the certificate and key files (PEM).
	TLSCert, TLSKey string
}

// IsSocket reports whether addr is a unix socket path.
func IsSocket(addr string) bool { return strings.Contains(addr, "/") }

// Listen checks opts and listens: a unix socket (mode 0600; a stale
// socket file is replaced), else TCP, loopback unless AllowRemote with
// TLS. loopback reports whether only this machine can connect (the Host
// check applies).
func Listen(opts ListenOptions) (ln net.Listener, loopback bool, err error) {
	if (opts.TLSCert == "") != (opts.TLSKey == "") {
		return nil, false, errors.New("--tls-cert and --tls-key go together: give both")
	}
	if IsSocket(opts.Addr) {
		if opts.TLSCert != "" {
			return nil, false, errors.New("--tls-cert/--tls-key do not go with a unix socket --listen")
		}
		ln, err := listenSocket(opts.Addr)
		return ln, true, err
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, false, fmt.Errorf("invalid --listen %q: give HOST:PORT or a unix socket path: %v", opts.Addr, err)
	}
	loopback = loopbackHost(host) && host != ""
	if !loopback {
		if !opts.AllowRemote {
			return nil, false, fmt.Errorf("--listen %s is not a loopback address: serving sessions to other machines needs --allow-remote and TLS (--tls-cert, --tls-key)", opts.Addr)
		}
		if opts.TLSCert == "" {
			return nil, false, fmt.Errorf("--listen %s with --allow-remote needs TLS: give --tls-cert and --tls-key", opts.Addr)
		}
	}
	ln, err = net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, false, fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	if opts.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(opts.TLSCert, opts.TLSKey)
		if err != nil {
			ln.Close()
			return nil, false, fmt.Errorf("TLS certificate %s and key %s: %w", opts.TLSCert, opts.TLSKey, err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	}
	return ln, loopback, nil
}

func listenSocket(path string) (net.Listener, error) {
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("--listen %s exists and is not a socket", path)
		}
		// A socket file: in use by a live server, or stale.
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return nil, fmt.Errorf("--listen %s: a server already listens there", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// Token is the server's bearer token: the value of the variable env when
// env is not "" (it must be set and long enough), else the token file in
// dir, made on first start (mode 0600) and made anew with rotate.
func Token(dir, env string, rotate bool, getenv func(string) string) (token string, made bool, err error) {
	if env != "" {
		if rotate {
			return "", false, errors.New("--rotate-token and --token-env do not go together: the token comes from the variable")
		}
		t := strings.TrimSpace(getenv(env))
		if t == "" {
			return "", false, fmt.Errorf("--token-env %s: the variable is not set", env)
		}
		if err := mcpserver.CheckToken(t); err != nil {
			return "", false, fmt.Errorf("--token-env %s: %w", env, err)
		}
		return t, false, nil
	}
	path := filepath.Join(dir, "token")
	if !rotate {
		b, err := os.ReadFile(path)
		if err == nil {
			t := strings.TrimSpace(string(b))
			if st, serr := os.Stat(path); serr == nil && st.Mode().Perm()&0o077 != 0 {
				return "", false, fmt.Errorf("the token file %s is readable by others (mode %v): make it 0600 or run with --rotate-token", path, st.Mode().Perm())
			}
			if err := mcpserver.CheckToken(t); err != nil {
				return "", false, fmt.Errorf("the token file %s: %w (run with --rotate-token)", path, err)
			}
			return t, false, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", false, err
		}
	}
	t, err := mcpserver.NewToken()
	if err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(t+"\n"), 0o600); err != nil {
		return "", false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", false, err
	}
	return t, true, nil
}
