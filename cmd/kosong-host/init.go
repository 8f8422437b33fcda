package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// addProjectCmds adds the commands for using kosong-host in any project and
// editor: init, sessions, acp.
func addProjectCmds(root *cobra.Command, g *globals) {
	root.AddCommand(newInitCmd(), newSessionsCmd(), newACPCmd(g))
}

// starterAgent is what `kosong-host init` writes to .kosong/agent.yaml.
const starterAgent = `# The agent of this project. kosong-host finds it here (.kosong/agent.yaml)
# when run anywhere in this folder without --agent.
version: 1
agent:
  # The built-in default agent: Shell, the file tools, FetchURL/SearchWeb,
  # SetTodoList, Think and the coder/explore/plan subagents. Every field
  # set below replaces the default's (system_prompt_args are merged).
  extend: default
  system_prompt_args:
    ROLE_ADDITIONAL: ""
  # To give the agent your team's own plugin, list the default tools and
  # yours. A plugin is a binary written with kosong-host's pluginsdk: a bare
  # name is found as kosong-plugin-NAME in --plugin-dir, KOSONG_PLUGIN_PATH
  # or plugins/ beside kosong-host; a path is relative to this file.
  #
  # tools:
  #   - shell:Shell
  #   - file
  #   - web
  #   - todo:SetTodoList
  #   - think:Think
  #   - ./plugins/kosong-plugin-deploy      # every tool of a plugin binary
  #   - plugin: mytools                     # or kosong-plugin-mytools, with settings
  #     tools: [Lint]
  #     timeout: 2m
`

func newInitCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:         "init",
		Short:       "Write a starter .kosong/agent.yaml that extends the built-in default agent",
		Args:        cobra.NoArgs,
		Annotations: map[string]string{noAgentAnnotation: "yes"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := filepath.Join(".kosong", "agent.yaml")
			if _, err := os.Stat(path); err == nil && !force {
				return exitCode(2, fmt.Errorf("%s already exists: edit it, or run kosong-host init --force to replace it", path))
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return exitCode(2, err)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return exitCode(2, err)
			}
			if err := os.WriteFile(path, []byte(starterAgent), 0o644); err != nil {
				return exitCode(2, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: it extends the built-in default agent; kosong-host run in this folder uses it once the folder is trusted (kosong-host trust)\n", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing .kosong/agent.yaml")
	return cmd
}
