package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/distribution"
	"github.com/kosong-host/kosong-host/host/policy"
	"github.com/kosong-host/kosong-host/host/spec"
)

func newPolicyCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "The admin policy: allowed plugin sources, required signers, allowed MCP servers, forced settings",
		Long: "The admin policy is " + policy.DefaultPath + ", or the file the environment variable\n" +
			policy.EnvVar + " names (an admin's setting: whoever sets it for a process chooses its policy).\n" +
			"A user's configuration cannot loosen it. See docs/distribution.md.",
	}
	var yolo bool
	check := &cobra.Command{
		Use:   "check",
		Short: "Explain what the admin policy decides for the agent: each plugin source, signer rule, MCP server, --yolo",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			denied, err := g.explainPolicy(cmd.OutOrStdout(), yolo)
			if err != nil {
				return exitCode(2, err)
			}
			if denied > 0 {
				return exitCode(1, fmt.Errorf("the admin policy refuses %d of the agent's settings", denied))
			}
			return nil
		},
	}
	check.Flags().BoolVar(&yolo, "yolo", false, "ask about --yolo too")
	cmd.AddCommand(check)
	return cmd
}

// explainPolicy writes one line per decision and returns how many are
// refusals.
func (g *globals) explainPolicy(w io.Writer, yolo bool) (int, error) {
	pol, err := adminPolicy()
	if err != nil {
		return 0, err
	}
	if pol.Path == "" {
		fmt.Fprintf(w, "no admin policy (%s does not exist): everything is allowed\n", policy.Path(os.Getenv))
		return 0, nil
	}
	fmt.Fprintf(w, "admin policy: %s\n", pol.Path)
	denied := 0
	say := func(what string, err error) {
		if err != nil {
			denied++
			fmt.Fprintf(w, "refused: %v\n", err)
			return
		}
		fmt.Fprintf(w, "allowed: %s\n", what)
	}
	files, err := g.agentFiles()
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		refs, err := f.Plugins()
		if err != nil {
			return 0, err
		}
		for _, ref := range refs {
			if ref.Source == "" {
				continue
			}
			r, err := distribution.ParseRef(ref.Source, ref.Version)
			if err != nil {
				return 0, err
			}
			say("plugin "+ref.Name+" from "+r.String(), g.checkSourcePolicy(ref, r))
			for _, i := range pol.Signers(r.Repo()) {
				fmt.Fprintf(w, "required: plugin %s must be signed by one of %s (rule required_signers[%d] of %s)\n",
					ref.Name, strings.Join(pol.RequiredSigners[i].Keys, ", "), i, pol.Path)
			}
		}
		for _, m := range f.MCPServers {
			say("MCP server "+m.Name, mcpPolicy(pol, m))
		}
	}
	if yolo {
		say("--yolo", pol.CheckYolo())
	}
	if pol.Forced.TelemetryEndpoint != "" {
		fmt.Fprintf(w, "forced: telemetry endpoint %s (rule forced.telemetry_endpoint of %s)\n", pol.Forced.TelemetryEndpoint, pol.Path)
	}
	return denied, nil
}

func mcpPolicy(pol *policy.Policy, m spec.MCPServer) error {
	if m.URL != "" {
		return pol.CheckMCPURL(m.Name, m.URL)
	}
	return pol.CheckMCPCommand(m.Name, m.Command)
}

// agentFiles are the agent files a run of the agent loads.
func (g *globals) agentFiles() ([]*spec.Spec, error) {
	s, err := loadAgentSpec(g.agentPath)
	if err != nil {
		return nil, err
	}
	return agent.AgentFiles(s, defaultAgentPath())
}

// isProjectFile reports whether an agent file belongs to the project the
// command runs in (under the work dir or the project folder), not to the
// user (their config dir) or kosong-host.
func (g *globals) isProjectFile(file string) bool {
	for _, root := range []string{g.agentFolder, workDir()} {
		if root == "" {
			continue
		}
		if rel, err := filepath.Rel(root, file); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func workDir() string {
	wd, _ := os.Getwd()
	return wd
}
