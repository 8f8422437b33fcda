package conversation

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/permission"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/subagent"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// Checked is what Check found.
type Checked struct {
	// Problems are the configuration errors, in the order found; the
	// agent was not loaded when there is any.
	Problems []error
	// Warnings are what run would fail on that validate does not need
	// (a missing API key).
	Warnings []string
	// Agent is the loaded agent when there is no problem; Close stops it.
	Agent    *agent.Agent
	stateDir string
}

// Check runs the steps of Open without calling a model or starting a
// session: the agent spec, its system prompt, its subagents (their spec
// files, system prompts, plugin and MCP configuration, recursively), the
// MCP configuration, the hooks and permission rules, the provider
// selection (a missing API key is a warning), and then the agent's plugins
// and MCP servers, loaded with every approval denied and their state in a
// temporary folder, against which the permission rules are bound. A spec
// that cannot be read is the error; everything else is in Checked.
func Check(ctx context.Context, cfg Config) (*Checked, error) {
	s, err := cfg.loadSpec()
	if err != nil {
		return nil, err
	}
	out := &Checked{}
	problem := func(err error) { out.Problems = append(out.Problems, err) }
	if _, err := renderPrompt(s, cfg); err != nil {
		problem(err)
	}
	if _, err := mcpclient.Configs(s, cfg.Load.MCPConfigFiles); err != nil {
		problem(err)
	}
	for _, err := range checkSubagents(s, cfg, map[string]bool{s.Path: true}) {
		problem(err)
	}
	if _, err := checkPolicy(cfg, s); err != nil { // the admin policy (policy.go)
		problem(err)
	}
	guards, err := readGuardConfig(s, cfg.ConfigPath)
	if err != nil {
		problem(err)
	} else if _, err := guards.hookRunner(cfg.WorkDir, "validate", loop.ObserverFunc(func(loop.Event) {})); err != nil {
		problem(err)
	}
	opts := providerOptions(cfg, s)
	if _, err := selectModel(opts); err != nil {
		if missingKey(opts) {
			out.Warnings = append(out.Warnings, err.Error()+" (needed by run, not by validate)")
		} else {
			problem(err)
		}
	}
	if len(out.Problems) > 0 {
		return out, nil
	}

	stateDir, err := os.MkdirTemp("", "kosong-validate-")
	if err != nil {
		return nil, err
	}
	load := cfg.Load
	load.WorkDir, load.SessionID, load.StateDir = cfg.WorkDir, fmt.Sprintf("validate-%d", os.Getpid()), stateDir
	load.Decider = approval.Deny{}
	a, err := agent.LoadSpec(ctx, s, load)
	if err != nil {
		os.RemoveAll(stateDir)
		problem(err)
		return out, nil
	}
	// The permission rules must name the tools run would have.
	tools := ruleTools(a.Toolset)
	if len(s.Subagents) > 0 {
		tools = append(tools, permission.Tool{Name: subagent.ToolName})
	}
	if err := guards.ruleSet(cfg.WorkDir).Bind(tools); err != nil {
		closeChecked(a, stateDir)
		problem(err)
		return out, nil
	}
	a.Source = cfg.AgentSource
	out.Agent, out.stateDir = a, stateDir
	return out, nil
}

// Close stops the agent's plugins and removes their state.
func (c *Checked) Close() {
	if c.Agent != nil {
		closeChecked(c.Agent, c.stateDir)
	}
}

func closeChecked(a *agent.Agent, stateDir string) {
	a.Close()
	os.RemoveAll(stateDir)
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

// checkSubagents loads every subagent of s, and theirs, as the Agent tool
// would when it starts one: spec file, system prompt, tool references and
// MCP configuration. seen holds the spec files already checked.
func checkSubagents(s *spec.Spec, cfg Config, seen map[string]bool) []error {
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
		ss, err := loadSpec(sub.Path, cfg.Load)
		if err != nil {
			problems = append(problems, wrap(err))
			continue
		}
		if _, err := renderPrompt(ss, cfg); err != nil {
			problems = append(problems, wrap(err))
		}
		if _, err := ss.Plugins(); err != nil {
			problems = append(problems, wrap(err))
		}
		if _, err := mcpclient.Configs(ss, nil); err != nil {
			problems = append(problems, wrap(err))
		}
		problems = append(problems, checkSubagents(ss, cfg, seen)...)
	}
	return problems
}
