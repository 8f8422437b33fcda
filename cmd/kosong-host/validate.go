package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/approval"
)

func newValidateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate",
		Short: "Check the agent spec and load every plugin and tool it names",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := signalContext(cmd.Context())
			defer cancel()
			a, done, err := g.loadForTools(ctx, approval.Deny{})
			if err != nil {
				return err
			}
			defer done()
			loaded, skipped := 0, 0
			for _, st := range a.Status {
				if st.Status == "loaded" {
					loaded++
				} else {
					skipped++
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok: agent %q, %d plugins, %d tools loaded, %d skipped\n",
				g.agentPath, a.Spec.Name, len(a.Plugins), loaded, skipped)
			return nil
		},
	}
}
