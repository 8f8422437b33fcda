package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/devcerts"
)

// newPluginsCertsCmd mints development certificates for remote tool servers.
func newPluginsCertsCmd() *cobra.Command {
	var opts devcerts.Options
	cmd := &cobra.Command{
		Use:   "certs DIR",
		Short: "Mint a development CA and the server and client certificates of a remote tool server",
		Long: "Write into DIR a new CA (ca.pem, ca-key.pem), a server certificate signed by it (server.pem,\n" +
			"server-key.pem; valid for 127.0.0.1, ::1, localhost and every --host) and a client certificate\n" +
			"(client.pem, client-key.pem). ECDSA P-256, valid for a year. Existing files are never overwritten.\n" +
			"The server takes --ca ca.pem --cert server.pem --key server-key.pem; agent.yaml takes\n" +
			"tls: {ca: ca.pem, cert: client.pem, key: client-key.pem}.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			written, err := devcerts.Mint(args[0], opts)
			if err != nil {
				return exitCode(1, fmt.Errorf("plugins certs: %w", err))
			}
			for _, p := range written {
				fmt.Fprintln(cmd.OutOrStdout(), "wrote", p)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&opts.Hosts, "host", nil, "a further DNS name or IP address of the server (repeatable)")
	cmd.Flags().StringVar(&opts.Client, "client-name", "", "common name of the client certificate (default kosong-host)")
	return cmd
}
