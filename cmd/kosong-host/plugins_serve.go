package main

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// newPluginsServeCmd serves a built-in plugin as a remote tool server, as
// its standalone binary does when given --listen.
func newPluginsServeCmd() *cobra.Command {
	var n pluginsdk.Network
	cmd := &cobra.Command{
		Use:   "serve NAME --listen ADDR --ca CA --cert CERT --key KEY",
		Short: "Serve a built-in plugin over TCP with mutual TLS, to hosts whose agent.yaml names it with remote:",
		Long: "Serve a built-in plugin as a remote tool server: every host that connects with a client\n" +
			"certificate signed by --ca gets its own Load, with its own session and capabilities, which\n" +
			"travel on the host's connection. TLS 1.3 only, never plaintext. Flags not given are read from\n" +
			pluginrpc.ListenEnv + ", " + pluginrpc.CAEnv + ", " + pluginrpc.CertEnv + " and " + pluginrpc.KeyEnv + ".\n" +
			"It prints \"serving NAME on ADDR\" once it listens and stops on SIGINT or SIGTERM.\n" +
			"Development certificates: kosong-host plugins certs DIR.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tools, ok := builtinCatalog[args[0]]
			if !ok {
				return exitCode(2, fmt.Errorf("no built-in plugin %q (built-ins: %s)", args[0], strings.Join(builtinNames(), ", ")))
			}
			if n.Listen == "" {
				return exitCode(2, fmt.Errorf("plugins serve %s: --listen ADDR is required (or %s)", args[0], pluginrpc.ListenEnv))
			}
			for _, f := range []struct{ flag, path string }{{"--ca", n.CA}, {"--cert", n.Cert}, {"--key", n.Key}} {
				if f.path == "" {
					return exitCode(2, fmt.Errorf("plugins serve %s: %s is required (mutual TLS needs the team CA, a server certificate and its key)", args[0], f.flag))
				}
				if _, err := os.Stat(f.path); err != nil {
					return exitCode(2, fmt.Errorf("plugins serve %s: %s: %v", args[0], f.flag, err))
				}
			}
			out := cmd.OutOrStdout()
			n.Ready = func(addr net.Addr) { fmt.Fprintf(out, "serving %s on %s\n", args[0], addr) }
			if err := pluginsdk.ServeNetwork(n, tools()...); err != nil {
				return exitCode(1, fmt.Errorf("plugins serve %s: %w", args[0], err))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&n.Listen, "listen", os.Getenv(pluginrpc.ListenEnv), "TCP address to serve on, e.g. :7443 or 127.0.0.1:0")
	f.StringVar(&n.CA, "ca", os.Getenv(pluginrpc.CAEnv), "PEM file of the team CA that signed the hosts' client certificates")
	f.StringVar(&n.Cert, "cert", os.Getenv(pluginrpc.CertEnv), "PEM file of the server's certificate")
	f.StringVar(&n.Key, "key", os.Getenv(pluginrpc.KeyEnv), "PEM file of the server's key")
	return cmd
}
