package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/plugins/ask"
	"github.com/kosong-host/kosong-host/plugins/echo"
	"github.com/kosong-host/kosong-host/plugins/file"
	"github.com/kosong-host/kosong-host/plugins/media"
	"github.com/kosong-host/kosong-host/plugins/shell"
	"github.com/kosong-host/kosong-host/plugins/think"
	"github.com/kosong-host/kosong-host/plugins/todo"
	"github.com/kosong-host/kosong-host/plugins/web"
	"github.com/kosong-host/kosong-host/pluginsdk"
)

// builtinCatalog is the first-party plugins compiled into kosong-host, by
// the bare name agent.yaml gives them. Each still runs in a process of its
// own: the host re-executes itself with `plugin-serve NAME`.
var builtinCatalog = map[string]func() []pluginsdk.Definition{
	"ask":   ask.Tools,
	"echo":  echo.Tools,
	"file":  file.Tools,
	"media": media.Tools,
	"shell": shell.Tools,
	"think": think.Tools,
	"todo":  todo.Tools,
	"web":   web.Tools,
}

// pluginServeCmd is the hidden subcommand a built-in plugin's process runs.
const pluginServeCmd = "plugin-serve"

// builtins tells the agent loader how to launch each built-in plugin: this
// very binary with `plugin-serve NAME`. Without the binary's path there are
// no built-ins (bare names then resolve to plugin binaries only).
func builtins() map[string]agent.Builtin {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	out := make(map[string]agent.Builtin, len(builtinCatalog))
	for name := range builtinCatalog {
		out[name] = agent.Builtin{Path: exe, Args: []string{pluginServeCmd, name}}
	}
	return out
}

func builtinNames() []string {
	names := make([]string, 0, len(builtinCatalog))
	for name := range builtinCatalog {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// newPluginServeCmd serves one built-in plugin over go-plugin, as its
// standalone kosong-plugin-NAME binary would; the host launches it.
func newPluginServeCmd() *cobra.Command {
	return &cobra.Command{
		Use:    pluginServeCmd + " NAME",
		Short:  "Serve a built-in plugin to a kosong-host that launched it",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		// The host's logging set-up is not for a plugin process: stdout
		// carries the go-plugin handshake, stderr hclog JSON.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(_ *cobra.Command, args []string) error {
			tools, ok := builtinCatalog[args[0]]
			if !ok {
				return exitCode(2, fmt.Errorf("no built-in plugin %q (built-ins: %s)", args[0], strings.Join(builtinNames(), ", ")))
			}
			// Run by hand (no host), it fails as a plugin binary does: exit 1.
			if err := pluginsdk.Serve(tools()...); err != nil {
				return exitCode(1, err)
			}
			return nil
		},
	}
}
