package main

import (
	"errors"
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/spec"
)

func newPluginsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "Pin and verify the plugin binaries an agent uses; serve a built-in plugin as a remote tool server",
		Long: "The pins live in a lock file beside the agent file (agent.yaml -> agent.lock.yaml), so the agent\n" +
			"file stays as written. A sha256 in agent.yaml takes precedence over the lock file's.",
	}
	cmd.AddCommand(newPluginsLockCmd(g), newPluginsVerifyCmd(g), newPluginsServeCmd(), newPluginsCertsCmd())
	return cmd
}

type pluginBinary struct {
	ref  spec.PluginRef
	path string
	sum  string
	err  error
}

// pluginBinaries resolves and hashes every plugin of the agent.
func (g *globals) pluginBinaries() (*spec.Spec, []pluginBinary, error) {
	s, err := spec.Load(g.agentPath, spec.LoadOptions{DefaultAgentPath: defaultAgentPath()})
	if err != nil {
		return nil, nil, exitCode(2, err)
	}
	refs, err := s.Plugins()
	if err != nil {
		return nil, nil, exitCode(2, err)
	}
	// A remote tool server has no binary here: its certificate identifies it.
	refs = slices.DeleteFunc(refs, func(r spec.PluginRef) bool { return r.Remote != nil })
	out := make([]pluginBinary, len(refs))
	for i, ref := range refs {
		out[i].ref = ref
		// A built-in plugin's binary is kosong-host itself.
		var res agent.Resolved
		res, out[i].err = agent.Resolve(ref, g.searchDirs(), builtins())
		out[i].path = res.Path
		if out[i].err == nil {
			out[i].sum, out[i].err = plugin.FileSHA256(out[i].path)
		}
	}
	return s, out, nil
}

func newPluginsLockCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "lock",
		Short: "Write the sha256 pins of the agent's plugin binaries to its lock file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, bins, err := g.pluginBinaries()
			if err != nil {
				return err
			}
			lock := &pins.File{Version: 1, Plugins: map[string]pins.Pin{}}
			var errs []error
			for _, b := range bins {
				if b.err != nil {
					errs = append(errs, b.err)
					continue
				}
				lock.Plugins[b.ref.Name] = pins.Pin{Path: b.path, SHA256: b.sum}
			}
			if len(errs) > 0 {
				return exitCode(2, errors.Join(errs...))
			}
			path := pins.PathFor(s.Path)
			if err := pins.Write(path, lock); err != nil {
				return exitCode(2, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d pins to %s\n", len(lock.Plugins), path)
			return nil
		},
	}
}

func newPluginsVerifyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Check the agent's plugin binaries against their pins (exit 1 on a mismatch)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, bins, err := g.pluginBinaries()
			if err != nil {
				return err
			}
			lock, err := pins.Read(pins.PathFor(s.Path))
			if err != nil {
				return exitCode(2, err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PLUGIN\tSTATUS\tBINARY")
			bad := 0
			for _, b := range bins {
				pin, from := b.ref.SHA256, "agent spec"
				if pin == "" {
					pin, from = lock.Plugins[b.ref.Name].SHA256, "lock file"
				}
				status := "ok (" + from + ")"
				switch {
				case b.err != nil:
					status, bad = "error: "+b.err.Error(), bad+1
				case pin == "":
					status = "not pinned"
				case pin != b.sum:
					status, bad = fmt.Sprintf("MISMATCH: %s pins %s, the file is %s", from, pin, b.sum), bad+1
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", b.ref.Name, status, b.path)
			}
			tw.Flush()
			if bad > 0 {
				return exitCode(1, fmt.Errorf("%d of %d plugins failed verification", bad, len(bins)))
			}
			return nil
		},
	}
}
