package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/sandbox"
)

// newSandboxExecCmd is the hidden wrapper the host launches a sandboxed
// plugin through: it applies the Landlock rules to itself and executes the
// plugin, which inherits them (and so does every process the plugin starts).
func newSandboxExecCmd() *cobra.Command {
	var rules string
	cmd := &cobra.Command{
		Use:    sandbox.ExecCommand + " --rules JSON -- PLUGIN [ARGS...]",
		Short:  "Run a plugin confined by Landlock rules (the host launches plugins this way)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(1),
		// Like plugin-serve: stdout and stderr belong to the plugin.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := sandbox.Unmarshal(rules)
			if err != nil {
				return exitCode(2, err)
			}
			return exitCode(1, sandbox.Exec(p, args, os.Environ()))
		},
	}
	cmd.Flags().StringVar(&rules, "rules", "", "the sandbox policy, as JSON")
	_ = cmd.MarkFlagRequired("rules")
	return cmd
}

// sandboxExecutable is the binary plugins are confined through: this one.
func sandboxExecutable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}
