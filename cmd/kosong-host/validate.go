package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/conversation"
)

type validateFlags struct {
	provider, model, config, script string
}

func newValidateCmd(g *globals) *cobra.Command {
	f := &validateFlags{}
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check everything run checks, without calling a model",
		Long: `Check the agent as run would, without calling a model: the agent spec, its
system prompt file and every ${VAR} in it, its subagents (their spec files,
system prompts and MCP configuration, recursively), the MCP configuration,
the provider and model selection, and then every plugin and tool it names
(launched, pins checked) and every MCP server.

A missing API key is a warning (validate needs none), printed when nothing
else is wrong. Every problem found is printed as "error: ..." on stderr; exit 0 ok, 1 a tool or MCP server
failed to load, 2 a configuration error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return validateAgent(cmd, g, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "", "model provider to check, as for run")
	fl.StringVar(&f.model, "model", "", "model alias or model name to check, as for run")
	fl.StringVar(&f.config, "config", "", "configuration file of providers and model aliases, as for run")
	fl.StringVar(&f.script, "script", "", "script file of the scripted provider, as for run")
	return cmd
}

func validateAgent(cmd *cobra.Command, g *globals, f *validateFlags) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	workDir, err := os.Getwd()
	if err != nil {
		return exitCode(2, err)
	}
	// validate launches every plugin: a declaration kept from an earlier
	// start is not a check.
	g.eagerPlugins = true
	cfg, err := g.conversationConfig(&runFlags{provider: f.provider, model: f.model, config: f.config, script: f.script}, workDir)
	if err != nil {
		return exitCode(2, err)
	}
	ctx, cancel := signalContext(cmd.Context())
	defer cancel()
	checked, err := conversation.Check(ctx, cfg)
	if err != nil {
		return exitCode(2, err)
	}
	if len(checked.Problems) > 0 {
		return reportProblems(stderr, checked.Problems)
	}
	defer checked.Close()
	a := checked.Agent
	// Warnings go out once nothing else is wrong, so that an error stays
	// the one line on stderr.
	for _, w := range checked.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if err := a.WaitMCP(ctx); err != nil {
		return exitCode(exitInterrupted, err)
	}
	count := map[string]int{}
	for _, st := range a.Statuses() {
		count[st.Status]++
	}
	fmt.Fprintf(stdout, "%s: ok: agent %q, %d plugins, %d tools loaded, %d skipped\n",
		g.agentPath, a.Spec.Name, len(a.Plugins), count["loaded"], count["skipped"])
	if count["failed"] > 0 {
		return exitCode(1, fmt.Errorf("%d MCP servers or tools failed to load (see kosong-host tools list)", count["failed"]))
	}
	return nil
}

// reportProblems prints every problem but the last as "error: ..." and
// returns the last as the command's error (exit 2).
func reportProblems(w io.Writer, problems []error) error {
	for _, p := range problems[:len(problems)-1] {
		fmt.Fprintf(w, "error: %v\n", p)
	}
	return exitCode(2, problems[len(problems)-1])
}
