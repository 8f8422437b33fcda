package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/distribution"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/spec"
)

func newPluginsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "Pin and verify the plugin binaries an agent uses; serve a built-in plugin as a remote tool server",
		Long: "The pins live in a lock file beside the agent file (agent.yaml -> agent.lock.yaml), so the agent\n" +
			"file stays as written. It pins the plugins of every agent file a run loads: the agent's own (its\n" +
			"extend chain included) and its subagents', recursively, and the command of each of their stdio MCP\n" +
			"servers (and --mcp-config-file's) that is a file, not a name looked up in PATH. A sha256 in an agent\n" +
			"file takes precedence over the lock file's. Paths in the lock file are relative to it.",
	}
	cmd.AddCommand(newPluginsLockCmd(g), newPluginsVerifyCmd(g), newPluginsServeCmd(), newPluginsCertsCmd(),
		newPluginsPublishCmd(g), newPluginsInfoCmd(), newPluginsInstallCmd(g), newPluginsMirrorCmd(g), newPluginsKeygenCmd())
	return cmd
}

type pluginBinary struct {
	ref     spec.PluginRef
	path    string
	sum     string
	builtin bool
	err     error
}

// mcpCommand is the command file of a stdio MCP server and its sha256.
type mcpCommand struct {
	name string
	path string
	sum  string
	err  error
}

// pluginBinaries resolves and hashes every plugin of every agent file a
// run of the agent loads (subagents included), and the command of each of
// their stdio MCP servers that is a file; lock is the run's lock file.
func (g *globals) pluginBinaries() (lock string, _ []pluginBinary, _ []mcpCommand, _ error) {
	s, err := loadAgentSpec(g.agentPath)
	if err != nil {
		return "", nil, nil, exitCode(2, err)
	}
	plugins, err := agent.RunPlugins(s, defaultAgentPath(), g.searchDirs(), builtins())
	if err != nil {
		return "", nil, nil, exitCode(2, err)
	}
	out := make([]pluginBinary, len(plugins))
	for i, p := range plugins {
		// A built-in plugin's binary is kosong-host itself.
		out[i] = pluginBinary{ref: p.Ref, path: p.Resolved.Path, builtin: p.Resolved.Builtin, err: p.Err}
		if out[i].err == nil {
			out[i].sum, out[i].err = pins.FileSHA256(out[i].path)
		}
	}
	servers, err := agent.RunMCPServers(s, defaultAgentPath(), g.mcpConfigs)
	if err != nil {
		return "", nil, nil, exitCode(2, err)
	}
	cmds := make([]mcpCommand, len(servers))
	for i, srv := range servers {
		cmds[i] = mcpCommand{name: srv.Config.Name, path: srv.Config.Command}
		cmds[i].sum, cmds[i].err = pins.FileSHA256(cmds[i].path)
		if cmds[i].err != nil {
			cmds[i].err = fmt.Errorf("MCP server %s (%s): %v", srv.Config.Name, srv.Config.Where(), cmds[i].err)
		}
	}
	return agent.LockFileFor(s.Path), out, cmds, nil
}

// relativeTo is path relative to the folder of file, when there is such a
// path.
func relativeTo(file, path string) string {
	if rel, err := filepath.Rel(filepath.Dir(file), path); err == nil {
		return rel
	}
	return path
}

func newPluginsLockCmd(g *globals) *cobra.Command {
	var (
		rf        registryFlags
		platforms []string
	)
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Write the pins of the agent's plugins to its lock file (local binaries by sha256, oci:// sources by digest for each --platform)",
		Long: "Pins each local plugin binary and MCP server command by sha256; each plugin with an oci:// source\n" +
			"by the version its tag or constraint resolved to, the image index's digest and, for every\n" +
			"--platform (default: this machine's), the manifest digest and the binary's sha256, so a teammate on\n" +
			"another platform installs and verifies against the same lock; each built-in plugin by the version\n" +
			"of kosong-host (it is part of the host, and no hash of the host binary is pinned).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, bins, cmds, err := g.pluginBinaries()
			if err != nil {
				return err
			}
			if inBuiltinAgents(path) {
				return exitCode(2, errors.New("the built-in agent is part of kosong-host and has no lock file: "+
					"run `kosong-host init` to write a .kosong/agent.yaml that extends it, then lock that"))
			}
			lock := &pins.File{Version: 1, Plugins: map[string]pins.Pin{}, MCPServers: map[string]pins.Pin{}}
			var errs []error
			if len(platforms) == 0 {
				platforms = []string{distribution.CurrentPlatform()}
			}
			for _, b := range bins {
				switch {
				case b.ref.Source != "":
					pin, err := lockSource(cmd.Context(), b.ref, rf.options(), platforms)
					if err != nil {
						errs = append(errs, err)
						continue
					}
					lock.Plugins[b.ref.Name] = pin
				case b.err != nil:
					errs = append(errs, b.err)
				case b.builtin:
					lock.Plugins[b.ref.Name] = pins.Pin{Builtin: buildVersion()}
				default:
					lock.Plugins[b.ref.Name] = pins.Pin{Path: relativeTo(path, b.path), SHA256: b.sum}
				}
			}
			for _, c := range cmds {
				if c.err != nil {
					errs = append(errs, c.err)
					continue
				}
				lock.MCPServers[c.name] = pins.Pin{Path: relativeTo(path, c.path), SHA256: c.sum}
			}
			if len(errs) > 0 {
				return exitCode(2, errors.Join(errs...))
			}
			if err := pins.Write(path, lock); err != nil {
				return exitCode(2, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d pins to %s\n", len(lock.Plugins)+len(lock.MCPServers), path)
			return nil
		},
	}
	rf.add(cmd)
	cmd.Flags().StringArrayVar(&platforms, "platform", nil, "OS/ARCH whose digests to record for plugins with an oci:// source (repeatable; default this machine's)")
	return cmd
}

// lockSource resolves a plugin's OCI source and pins it for platforms.
func lockSource(ctx context.Context, ref spec.PluginRef, opts distribution.Options, platforms []string) (pins.Pin, error) {
	r, err := distribution.ParseRef(ref.Source, ref.Version)
	if err != nil {
		return pins.Pin{}, fmt.Errorf("plugin %s: %v", ref.Name, err)
	}
	t, err := distribution.Remote(r, opts)
	if err != nil {
		return pins.Pin{}, fmt.Errorf("plugin %s: %v", ref.Name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	p, err := distribution.Lock(ctx, t, r, platforms)
	if err != nil {
		return pins.Pin{}, fmt.Errorf("plugin %s: %v", ref.Name, err)
	}
	out := pins.Pin{Source: sourceText(ref), Version: p.Version, Index: p.Index, Platforms: map[string]pins.PlatformPin{}}
	for plat, pp := range p.Platforms {
		out.Platforms[plat] = pins.PlatformPin{Manifest: pp.Manifest, SHA256: pp.SHA256}
	}
	return out, nil
}

func newPluginsVerifyCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Check the agent's plugin binaries against their pins (exit 1 on a mismatch)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lockPath, bins, cmds, err := g.pluginBinaries()
			if err != nil {
				return err
			}
			lock, err := pins.Read(lockPath)
			if err != nil {
				return exitCode(2, err)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PLUGIN\tSTATUS\tFILE")
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
				case b.builtin && b.ref.SHA256 == "":
					status = "built-in (part of kosong-host " + buildVersion() + ")"
				case pin == "":
					status = "not pinned"
				case pin != b.sum:
					if from == "lock file" {
						from += " " + lockPath
					}
					status, bad = fmt.Sprintf("MISMATCH: %s pins %s, the file is %s", from, pin, b.sum), bad+1
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", b.ref.Name, status, b.path)
			}
			for _, c := range cmds {
				pin := lock.MCPServers[c.name].SHA256
				status := "ok (lock file)"
				switch {
				case c.err != nil:
					status, bad = "error: "+c.err.Error(), bad+1
				case pin == "":
					status = "not pinned"
				case pin != c.sum:
					status, bad = fmt.Sprintf("MISMATCH: lock file %s pins %s, the file is %s", lockPath, pin, c.sum), bad+1
				}
				fmt.Fprintf(tw, "mcp:%s\t%s\t%s\n", c.name, status, c.path)
			}
			tw.Flush()
			if bad > 0 {
				return exitCode(1, fmt.Errorf("%d of %d plugins and MCP server commands failed verification; if the changes are intended, run `kosong-host plugins lock`",
					bad, len(bins)+len(cmds)))
			}
			return nil
		},
	}
}
