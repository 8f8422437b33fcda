package pluginsdk

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// Network says where and with which certificates a plugin serves as a
// remote tool server, for hosts on other machines (see ServeNetwork).
type Network struct {
	// Listen is the TCP address to listen on, e.g. ":7443" or "127.0.0.1:0".
	Listen string
	// CA is the PEM file of the team CA that signed the hosts' client
	// certificates; Cert and Key are this server's certificate and key.
	CA, Cert, Key string
	// Ready, when set, is called with the address once the server listens
	// (the port chosen for ":0").
	Ready func(addr net.Addr)
}

// NetworkFromArgs reads the network settings of a plugin binary from its
// arguments (--listen ADDR --ca FILE --cert FILE --key FILE) and, for each
// one not given, from the environment (KOSONG_PLUGIN_LISTEN, _CA, _CERT,
// _KEY). ok is false when no listen address is set: the binary is then a
// plugin launched by a host.
func NetworkFromArgs(args []string, getenv func(string) string) (n Network, ok bool, err error) {
	fs := flag.NewFlagSet("plugin", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&n.Listen, "listen", getenv(pluginrpc.ListenEnv), "TCP address to serve on")
	fs.StringVar(&n.CA, "ca", getenv(pluginrpc.CAEnv), "team CA (PEM)")
	fs.StringVar(&n.Cert, "cert", getenv(pluginrpc.CertEnv), "server certificate (PEM)")
	fs.StringVar(&n.Key, "key", getenv(pluginrpc.KeyEnv), "server key (PEM)")
	if err := fs.Parse(args); err != nil {
		return n, false, fmt.Errorf("plugin arguments: %w (want --listen ADDR --ca FILE --cert FILE --key FILE)", err)
	}
	if fs.NArg() > 0 {
		return n, false, fmt.Errorf("plugin arguments: unexpected %q (want --listen ADDR --ca FILE --cert FILE --key FILE)", fs.Arg(0))
	}
	return n, n.Listen != "", nil
}

// networkArgs are the arguments Serve reads network settings from: all of
// them when one is --listen, else none (a built-in plugin's process is the
// host binary given a subcommand; a test binary has flags of its own).
func networkArgs(args []string) []string {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "listen" {
			return args
		}
	}
	return nil
}

// ServeNetwork serves the given tools over TCP with mutual TLS to every host
// that connects with a certificate from n.CA, until SIGINT or SIGTERM.
// Each connection is one host: it loads its own tools with its own session
// and capabilities, which travel on that connection (the server never
// connects to a host). Serve calls it when the binary is given --listen or
// KOSONG_PLUGIN_LISTEN.
func ServeNetwork(n Network, defs ...Definition) error {
	if err := checkDefinitions(defs); err != nil {
		return err
	}
	tlsCfg, err := pluginrpc.NetworkTLS(n.CA, n.Cert, n.Key, "")
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", n.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	logger := pluginrpc.NewLogger()
	logger.Info("serving tools", "addr", ln.Addr().String())
	if n.Ready != nil {
		n.Ready(ln.Addr())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer killTrackedGroups()
	return serveNetwork(ctx, ln, tlsCfg, defs, logger)
}

func serveNetwork(ctx context.Context, ln net.Listener, tlsCfg *tls.Config, defs []Definition, logger hclog.Logger) error {
	return pluginrpc.ServeNetwork(ctx, pluginrpc.NetworkConfig{
		Listener: ln, TLS: tlsCfg, Logger: logger,
		NewServer: func() pluginrpc.Server { return newServer(defs, logger) },
	})
}

// Close closes the connections to the host's capability server, once the
// host that loaded the tools is gone.
func (s *server) Close() error {
	s.mu.Lock()
	loads := s.loads
	s.loads = map[string]*loaded{}
	s.mu.Unlock()
	var first error
	for _, l := range loads {
		if l.host != nil {
			if err := l.host.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}
