package main

import "github.com/spf13/cobra"

func newSessionsCmd() *cobra.Command {
	return &cobra.Command{Use: "sessions", Hidden: true, Annotations: map[string]string{noAgentAnnotation: "yes"},
		RunE: func(*cobra.Command, []string) error { return nil }}
}
