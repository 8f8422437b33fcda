package main

import "github.com/spf13/cobra"

func newACPCmd(g *globals) *cobra.Command {
	return &cobra.Command{Use: "acp", Short: "Serve the Agent Client Protocol on stdio (for editors)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return nil }}
}
