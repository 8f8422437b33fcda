package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/permission"
)

func newPermissionsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "permissions",
		Short: "Check the agent's permission rules (permissions: allow, ask, deny)",
	}
	var configPath string
	check := &cobra.Command{
		Use:   "check TOOL [JSON]",
		Short: "Say which permission rule decides a call of TOOL with these arguments, and why",
		Long: `Say which permission rule decides a call of TOOL with the JSON arguments:
deny, ask or allow, the rule, its file and line, and the argument it matched.
For a shell command, each simple command in it (nested ones included) is
listed with the allow rule that matches it, or why none does (a redirection
to a file, a command the parser cannot prove safe).
The rules come from agent.yaml and the configuration file; the agent's
plugins are loaded to learn which argument each tool's rules match. Nothing
is called.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := "{}"
			if len(args) == 2 {
				raw = args[1]
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(raw), &v); err != nil {
				return exitCode(2, fmt.Errorf("arguments of %s: not a JSON object: %v", args[0], err))
			}
			return g.withAgent(cmd, approval.Deny{}, func(_ context.Context, a *agent.Agent) error {
				wd, err := os.Getwd()
				if err != nil {
					return exitCode(2, err)
				}
				set, err := conversation.Rules(a.Spec, configPath, wd, a.Toolset)
				if err != nil {
					return exitCode(2, err)
				}
				t, ok := a.Toolset.Find(args[0])
				if !ok {
					return exitCode(2, fmt.Errorf("unknown tool %s (the agent's tools: %s)", args[0], strings.Join(a.Toolset.Names(), ", ")))
				}
				tool := permission.ToolOf(t.Spec())
				d := set.Decide(tool, json.RawMessage(raw))
				out := cmd.OutOrStdout()
				decision := string(d.Effect)
				if d.Effect == permission.None {
					decision = "no rule"
				}
				fmt.Fprintf(out, "%s: %s\n", tool.Name, decision)
				if tool.RuleArgument == "" {
					fmt.Fprintf(out, "  rules match %s by name only (it declares no rule argument)\n", tool.Name)
				} else {
					fmt.Fprintf(out, "  rule argument: %s = %q\n", tool.RuleArgument, d.Value)
				}
				fmt.Fprintf(out, "  %s\n", d.Reason)
				if len(d.Parts) > 0 {
					fmt.Fprintln(out, "  simple commands:")
				}
				for _, p := range d.Parts {
					where := ""
					if p.Context != "" {
						where = " (" + p.Context + ")"
					}
					verdict := "allowed by " + p.Rule
					if p.Rule == "" {
						verdict = p.Note
					}
					fmt.Fprintf(out, "    %s%s: %s\n", p.Command, where, verdict)
				}
				switch d.Effect {
				case permission.Deny:
					fmt.Fprintln(out, "  the call is refused, with --yolo too")
				case permission.Ask:
					fmt.Fprintln(out, "  the user is asked to approve it, even if its action was approved for the session (--yolo approves it; -p without --yolo rejects it)")
				case permission.Allow:
					fmt.Fprintln(out, "  its approval requests are approved by the rule")
				default:
					if len(d.Parts) > 0 || d.Unproven != "" {
						fmt.Fprintln(out, "  not allowed by rules: the tool's own approval request decides (-p without --yolo rejects it)")
					}
				}
				return nil
			})
		},
	}
	check.Flags().StringVar(&configPath, "config", "", "configuration file (default $XDG_CONFIG_HOME/kosong-host/config.yaml)")
	cmd.AddCommand(check)
	return cmd
}
