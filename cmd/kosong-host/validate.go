package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/permission"
	"github.com/kosong-host/kosong-host/host/prompt"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/subagent"
	"github.com/kosong-host/kosong-host/providers/registry"
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
	s, err := loadAgentSpec(g.agentPath)
	if err != nil {
		return exitCode(2, err)
	}
	workDir, err := os.Getwd()
	if err != nil {
		return exitCode(2, err)
	}
	problems, warnings, guards := checkWithoutModel(s, g, f, workDir)
	if len(problems) > 0 {
		return reportProblems(stderr, problems)
	}

	ctx, cancel := signalContext(cmd.Context())
	defer cancel()
	stateDir, err := os.MkdirTemp("", "kosong-validate-")
	if err != nil {
		return exitCode(2, err)
	}
	defer os.RemoveAll(stateDir)
	opts, err := g.loadOptions(approval.Deny{}, fmt.Sprintf("validate-%d", os.Getpid()), stateDir)
	if err != nil {
		return exitCode(2, err)
	}
	a, err := agent.LoadSpec(ctx, s, opts)
	if err != nil {
		return exitCode(2, err)
	}
	defer a.Close()
	// The permission rules must name the tools run would have.
	tools := ruleTools(a.Toolset)
	if len(s.Subagents) > 0 {
		tools = append(tools, permission.Tool{Name: subagent.ToolName})
	}
	if err := guards.ruleSet(workDir).Bind(tools); err != nil {
		return exitCode(2, err)
	}
	// Warnings go out once nothing else is wrong, so that an error stays
	// the one line on stderr.
	for _, w := range warnings {
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

// checkWithoutModel runs the checks of run that launch nothing: the system
// prompts, the subagents, the MCP configuration, the hooks and permissions of
// the configuration file (returned for the checks that need the tools) and
// the provider selection.
func checkWithoutModel(s *spec.Spec, g *globals, f *validateFlags, workDir string) (problems []error, warnings []string, guards guardConfig) {
	if _, err := prompt.Render(s.SystemPromptPath, s.SystemPromptArgs, prompt.Options{WorkDir: workDir}); err != nil {
		problems = append(problems, err)
	}
	if _, err := mcpclient.Configs(s, g.mcpConfigs); err != nil {
		problems = append(problems, err)
	}
	problems = append(problems, checkSubagents(s, workDir, map[string]bool{s.Path: true})...)
	guards, err := readGuardConfig(s, f.config)
	if err != nil {
		problems = append(problems, err)
	} else if _, err := guards.hookRunner(workDir, "validate", loop.ObserverFunc(func(loop.Event) {})); err != nil {
		problems = append(problems, err)
	}

	opts := providerOptions(&runFlags{provider: f.provider, model: f.model, config: f.config, script: f.script}, s, workDir)
	if _, err := registry.Select(opts); err != nil {
		if missingKey(opts) {
			warnings = append(warnings, err.Error()+" (needed by run, not by validate)")
		} else {
			problems = append(problems, err)
		}
	}
	return problems, warnings, guards
}

// missingKey reports whether the selection opts fails only for want of an
// API key: it succeeds once every key variable has a value.
func missingKey(opts registry.Options) bool {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	opts.Getenv = func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		if strings.HasSuffix(name, "_KEY") || strings.HasSuffix(name, "_TOKEN") {
			return "validate-placeholder"
		}
		return ""
	}
	_, err := registry.Select(opts)
	return err == nil
}

// checkSubagents loads every subagent of s, and theirs, as the subagent
// tool would when it starts one: spec file, system prompt, tool references
// and MCP configuration. seen holds the spec files already checked.
func checkSubagents(s *spec.Spec, workDir string, seen map[string]bool) []error {
	names := make([]string, 0, len(s.Subagents))
	for name := range s.Subagents {
		names = append(names, name)
	}
	sort.Strings(names)
	var problems []error
	for _, name := range names {
		sub := s.Subagents[name]
		if seen[sub.Path] {
			continue
		}
		seen[sub.Path] = true
		wrap := func(err error) error { return fmt.Errorf("subagent %s of %s: %w", name, s.Path, err) }
		ss, err := loadAgentSpec(sub.Path)
		if err != nil {
			problems = append(problems, wrap(err))
			continue
		}
		if _, err := prompt.Render(ss.SystemPromptPath, ss.SystemPromptArgs, prompt.Options{WorkDir: workDir}); err != nil {
			problems = append(problems, wrap(err))
		}
		if _, err := ss.Plugins(); err != nil {
			problems = append(problems, wrap(err))
		}
		if _, err := mcpclient.Configs(ss, nil); err != nil {
			problems = append(problems, wrap(err))
		}
		problems = append(problems, checkSubagents(ss, workDir, seen)...)
	}
	return problems
}
