package main

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/audit"
	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/host/session"
)

// newAuditCmd prints a session's audit log: every tool call, its
// decision and its result (see docs/observability.md).
func newAuditCmd() *cobra.Command {
	var asJSON, server bool
	cmd := &cobra.Command{
		Use:         "audit [SESSION]",
		Short:       "Print a session's audit log (default: this folder's newest session): each tool call, who allowed it and how it ended",
		Args:        cobra.MaximumNArgs(1),
		Annotations: map[string]string{noAgentAnnotation: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			info, err := auditSession(args)
			if server {
				info, err = serverAuditLog(args)
			}
			if err != nil {
				return exitCode(2, err)
			}
			calls, err := audit.Read(info.Dir)
			if err != nil {
				return exitCode(2, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if calls == nil {
					calls = []audit.Call{}
				}
				return enc.Encode(calls)
			}
			if len(calls) == 0 {
				fmt.Fprintf(out, "no tool calls in session %s\n", info.ID)
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TIME\tCALL\tTOOL\tSOURCE\tDECISION\tRESULT\tDURATION\tARGS SHA-256")
			for _, c := range calls {
				status, dur := c.Status, c.Duration.Round(time.Millisecond).String()
				if status == "" {
					status, dur = "no result (the host stopped)", "-"
				}
				tool := c.Tool
				if c.Subagent != "" {
					tool = c.Subagent + "/" + tool
				}
				sum := c.ArgsSHA256
				if len(sum) > 12 {
					sum = sum[:12]
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Start.Local().Format(time.DateTime), c.CallID, tool,
					orDash(c.Source), c.Decision(), status, dur, sum)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the calls as JSON")
	cmd.Flags().BoolVar(&server, "server", false, "print the log of `kosong-host serve`: every session it served")
	return cmd
}

// serverAuditLog is where `serve` keeps its audit log of all sessions.
func serverAuditLog(args []string) (session.Info, error) {
	if len(args) > 0 {
		return session.Info{}, fmt.Errorf("--server prints the server's log of every session: give no SESSION")
	}
	dir, err := serverclient.Dir(os.Getenv)
	if err != nil {
		return session.Info{}, err
	}
	return session.Info{ID: "of the server", Dir: dir}, nil
}

// auditSession is the session named by args, else the newest of the
// working folder.
func auditSession(args []string) (session.Info, error) {
	if len(args) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return session.Info{}, err
		}
		return session.Latest(session.Options{}, wd)
	}
	list, err := session.List(session.Options{}, "")
	if err != nil {
		return session.Info{}, err
	}
	for _, s := range list {
		if s.ID == args[0] {
			return s, nil
		}
	}
	return session.Info{}, fmt.Errorf("audit: no session %q (kosong-host sessions --all lists them)", args[0])
}
