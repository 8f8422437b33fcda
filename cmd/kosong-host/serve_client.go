package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/serverclient"
)

// serverFlag is --server URL with --token-env VAR: a command that talks
// to a `kosong-host serve`.
type serverFlag struct {
	url      string
	tokenEnv string
}

func (f *serverFlag) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.url, "server", "", "a kosong-host serve to ask (http://HOST:PORT, https://..., unix:///PATH)")
	cmd.Flags().StringVar(&f.tokenEnv, "token-env", "", "with --server: the variable holding its bearer token (default: the token file of serve on this machine)")
}

// client is the API client of --server.
func (f *serverFlag) client() (*serverclient.Client, error) {
	token, err := serverclient.ReadToken(f.tokenEnv, os.Getenv)
	if err != nil {
		return nil, err
	}
	return serverclient.New(f.url, token, nil)
}

// listServerSessions is `sessions --server URL`.
func listServerSessions(cmd *cobra.Command, f serverFlag, asJSON bool) error {
	c, err := f.client()
	if err != nil {
		return exitCode(2, err)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
	defer cancel()
	list, err := c.Sessions(ctx)
	if err != nil {
		return exitCode(1, err)
	}
	out := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintf(out, "no sessions on %s\n", f.url)
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tCREATED\tWORK DIR\tAGENT\tMODEL")
	for _, s := range list {
		status := s.Status
		if s.Interrupted {
			status += " (interrupted)"
		}
		if len(s.Pending) > 0 {
			status += fmt.Sprintf(" (%d waiting)", len(s.Pending))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, status, s.Created.Local().Format("2006-01-02 15:04"), s.Cwd,
			orDash(s.Agent), orDash(s.Model))
	}
	return tw.Flush()
}
