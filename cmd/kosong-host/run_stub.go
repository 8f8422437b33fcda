package main

import "github.com/spf13/cobra"

// newRunCmd is replaced by run.go.
func newRunCmd(*globals) *cobra.Command { return nil }
