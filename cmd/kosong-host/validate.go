package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
)

func newValidateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate",
		Short: "Check the agent spec and load every plugin and tool it names",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withAgent(cmd, approval.Deny{}, func(_ context.Context, a *agent.Agent) error {
				count := map[string]int{}
				for _, st := range a.Status {
					count[st.Status]++
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok: agent %q, %d plugins, %d tools loaded, %d skipped\n",
					g.agentPath, a.Spec.Name, len(a.Plugins), count["loaded"], count["skipped"])
				if count["failed"] > 0 {
					return exitCode(1, fmt.Errorf("%d MCP servers or tools failed to load (see kosong-host tools list)", count["failed"]))
				}
				return nil
			})
		},
	}
}
