package main

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/suggest"
	"github.com/kosong-host/kosong-host/providers/config"
)

// globals are the flags every command shares.
type globals struct {
	agentPath string
	// agentSource is the spec in use and how it was found (findAgent).
	agentSource agent.Source
	logLevel    string
	pluginDirs  []string
	mcpConfigs  []string
	startLimit  time.Duration
	// eagerPlugins is --eager-plugins (lazy.go).
	eagerPlugins bool
	mcpWait      time.Duration
	logger       hclog.Logger
	// configPath is the command's --config ("" when it has none or it is
	// not given: the default path).
	configPath string
	// trust is --trust: the work dir's project files are trusted for this
	// run. dotenvTrusted says whether .env may be read (gateWorkspace).
	trust         bool
	dotenvTrusted bool
	// folder is the work dir as the trust store keys it; trustedProject
	// says its agent file runs because the store trusts it.
	folder         string
	trustedProject bool
	// agentFolder is the project folder above the work dir whose
	// .kosong/agent.yaml runs ("" when the agent is not from one).
	agentFolder string
}

func newRootCmd() *cobra.Command {
	g := &globals{}
	agent.SourceResolver = g.installSource // plugins with an oci:// source (plugins_source.go)
	root := &cobra.Command{
		Use:   "kosong-host",
		Short: "Run LLM agents whose tools live in separate plugin binaries",
		Long: `Run LLM agents whose tools live in separate plugin binaries.

kosong-host alone, in a terminal, starts an interactive session as
kosong-host run does (run --help for its flags); without a terminal it
needs a command (kosong-host run -p PROMPT for one turn).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if isGroup(cmd) {
				return nil // it shows its help
			}
			if err := checkPluginDirs(g.pluginDirs); err != nil {
				return err
			}
			level := hclog.LevelFromString(g.logLevel)
			if level == hclog.NoLevel {
				return exitCode(2, fmt.Errorf("invalid --log-level %q: use trace, debug, info, warn, error or off", g.logLevel))
			}
			useHashCache()
			g.logger = hclog.New(&hclog.LoggerOptions{Name: "kosong-host", Level: level, Output: cmd.ErrOrStderr()})
			// go-plugin also writes to the standard logger: route it through ours.
			log.SetFlags(0)
			log.SetOutput(g.logger.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}))
			if f := cmd.Flags().Lookup("config"); f != nil {
				g.configPath = f.Value.String()
			}
			return g.findAgent(cmd, args)
		},
	}
	root.Version = buildVersion()
	root.SetVersionTemplate("kosong-host {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return exitCode(2, err) })
	pf := root.PersistentFlags()
	pf.StringVar(&g.agentPath, "agent", "", "agent spec file (default: the first of ./.kosong/agent.yaml, ./agent.yaml, .kosong/agent.yaml of a folder above up to the repository root, $XDG_CONFIG_HOME/kosong-host/agent.yaml, else the built-in default agent; the folder's own only in a trusted folder: see kosong-host trust)")
	pf.BoolVar(&g.trust, "trust", false, "trust the current folder's project files (.kosong/agent.yaml or agent.yaml, what it runs, .env) for this run without asking or recording it; see kosong-host trust")
	pf.StringVar(&g.logLevel, "log-level", "warn", "log level: trace, debug, info, warn, error, off")
	pf.StringArrayVar(&g.pluginDirs, "plugin-dir", nil, "directory searched for kosong-plugin-NAME binaries (repeatable; before KOSONG_PLUGIN_PATH, plugins/ beside the binary and the built-in plugins)")
	pf.DurationVar(&g.startLimit, "plugin-start-timeout", plugin.DefaultStartTimeout, "how long a starting plugin may make no progress (on Linux: use no CPU) before it is given up; one still starting after 10 times as long is given up too")
	pf.BoolVar(&g.eagerPlugins, "eager-plugins", false, "start every plugin when the session opens (as eager_plugins: true in the configuration file does); by default a plugin whose tools were declared before starts at its first call, its tools offered from the declaration cache")
	pf.StringArrayVar(&g.mcpConfigs, "mcp-config-file", nil, `MCP config file ({"mcpServers": ...}), repeatable`)
	pf.DurationVar(&g.mcpWait, "mcp-startup-timeout", mcpclient.DefaultStartTimeout,
		"how long the first model request waits for MCP servers; a slower one keeps starting (within its startup_timeout) and its tools join when it is up")
	root.AddCommand(newToolsCmd(g), newValidateCmd(g), newVersionCmd(), newPluginsCmd(g), newMCPCmd(g), newModelsCmd(g), newPluginServeCmd(), newSandboxExecCmd(), newPermissionsCmd(g), newTrustCmd(g), newSetupCmd())
	root.AddCommand(newServeCmd(g))
	root.AddCommand(newAuditCmd())
	addProjectCmds(root, g)
	root.AddCommand(newPolicyCmd(g))
	root.AddCommand(newWorkerCmd(g), newApprovalsCmd(), newQuestionsCmd())
	runCmd := newRunCmd(g)
	root.AddCommand(runCmd)
	root.RunE = func(cmd *cobra.Command, _ []string) error { return runAlone(cmd, runCmd) }
	for _, c := range root.Commands() {
		guardGroup(c)
	}
	return root
}

// runAlone is `kosong-host` with no command: in a terminal, the
// interactive session of `run`; without one (a script, a pipe), the usage
// and exit 2, so that a script names what it runs and its stdin is never
// taken for a prompt unasked.
func runAlone(root, runCmd *cobra.Command) error {
	if !isTerminal(root.InOrStdin()) {
		root.SetOut(root.ErrOrStderr())
		_ = root.Usage()
		return exitCode(2, errors.New("no command: without a terminal give one, e.g. kosong-host run -p PROMPT (kosong-host alone starts a session in a terminal)"))
	}
	runCmd.SetContext(root.Context())
	runCmd.SetIn(root.InOrStdin())
	runCmd.SetOut(root.OutOrStdout())
	runCmd.SetErr(root.ErrOrStderr())
	return runCmd.RunE(runCmd, nil)
}

// guardGroup makes a command group (tools, plugins, mcp, ...) and the
// groups under it refuse an unknown subcommand as the root does: exit 2,
// with a "did you mean"; the group alone still shows its help.
func guardGroup(c *cobra.Command) {
	if !c.HasSubCommands() {
		return
	}
	for _, sub := range c.Commands() {
		guardGroup(sub)
	}
	if c.Runnable() {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		var names []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return exitCode(2, fmt.Errorf("unknown command %q for %q%s (commands: %s)", args[0], cmd.CommandPath(),
			suggest.Hint(args[0], names), strings.Join(names, ", ")))
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// isGroup: c only groups subcommands (guardGroup); it needs no agent.
func isGroup(c *cobra.Command) bool { return c.HasParent() && c.HasSubCommands() }

// loadOptions are the agent load options shared by every command.
func (g *globals) loadOptions(decider approval.Decider, sessionID, stateDir string) (agent.Options, error) {
	wd, err := os.Getwd()
	if err != nil {
		return agent.Options{}, err
	}
	cf, err := configFile(g.configPath)
	if err != nil {
		return agent.Options{}, err
	}
	secrets := cf.KeyVariables()
	return agent.Options{
		DefaultAgentPath: defaultAgentPath(),
		PluginDirs:       g.searchDirs(),
		Builtins:         builtins(),
		WorkDir:          wd,
		SessionID:        sessionID,
		StateDir:         stateDir,
		Decider:          decider,
		Logger:           g.logger,
		StartTimeout:     g.startLimit,
		MCPConfigFiles:   g.mcpConfigs,
		Launcher:         launcher(),
		LockFile:         agent.LockFileFor(g.agentPath),
		MCPStartupWait:   g.mcpWait,
		SandboxExec:      sandboxExecutable(),
		SecretEnv:        secrets,
		Declarations:     g.declarations(cf),
		// Commands that select no model (tools, mcp serve) know nothing of
		// it; run replaces this with the selected model's facts.
		Model: &agent.Model{},
	}, nil
}

// configFile is the configuration file: --config, else the default path
// (a missing default file is an empty one). Its key variables
// (api_key_env) go to no plugin or MCP server without allow_secrets.
func configFile(path string) (*config.File, error) {
	if path != "" {
		return config.Load(path)
	}
	f, _, err := config.LoadOptional(config.DefaultPath(os.Getenv))
	return f, err
}

// searchDirs lists where bare plugin names are looked up: --plugin-dir,
// KOSONG_PLUGIN_PATH, then plugins/ beside the kosong-host binary. A name
// found in none of them is one of the built-in plugins, if it is one.
func (g *globals) searchDirs() []string {
	dirs := append([]string(nil), g.pluginDirs...)
	dirs = append(dirs, filepath.SplitList(os.Getenv("KOSONG_PLUGIN_PATH"))...)
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Join(filepath.Dir(exe), "plugins"))
	}
	var out []string
	for _, d := range dirs {
		if d != "" {
			out = append(out, d)
		}
	}
	return out
}
