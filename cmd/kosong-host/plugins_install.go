package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/distribution"
	"github.com/kosong-host/kosong-host/host/spec"
)

// sourcePlugins lists the plugins with an OCI source of every agent file
// a run of the agent loads.
func (g *globals) sourcePlugins() ([]agent.RunPlugin, error) {
	s, err := loadAgentSpec(g.agentPath)
	if err != nil {
		return nil, exitCode(2, err)
	}
	files, err := agent.AgentFiles(s, defaultAgentPath())
	if err != nil {
		return nil, exitCode(2, err)
	}
	var out []agent.RunPlugin
	seen := map[string]bool{}
	for _, f := range files {
		refs, err := f.Plugins()
		if err != nil {
			return nil, exitCode(2, err)
		}
		for _, ref := range refs {
			if ref.Source == "" || seen[ref.Name] {
				continue
			}
			seen[ref.Name] = true
			out = append(out, agent.RunPlugin{Ref: ref, AgentFile: f.Path})
		}
	}
	return out, nil
}

func newPluginsInstallCmd(g *globals) *cobra.Command {
	var rf registryFlags
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Fetch the agent's plugins with an oci:// source into the plugin cache, verified against the lock file",
		Long: "Fetches each plugin with a `source: oci://...` of the agent (and its subagents) for this platform\n" +
			"into the content-addressed plugin cache ($XDG_CACHE_HOME/kosong-host/plugins), from the\n" +
			"configuration's plugin_mirrors first, then the source; checks digests, the lock file, signatures\n" +
			"(plugin_trust, the admin policy) before anything is written to the cache. A run installs a\n" +
			"missing plugin itself, saying so.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plugins, err := g.sourcePlugins()
			if err != nil {
				return err
			}
			if len(plugins) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "%s has no plugin with an oci:// source\n", g.agentPath)
				return nil
			}
			inst, err := g.sourceInstaller(rf.options())
			if err != nil {
				return exitCode(2, err)
			}
			lockFile := agent.LockFileFor(g.agentPath)
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			var errs []error
			for _, p := range plugins {
				got, err := g.installOne(ctx, inst, p.Ref, lockFile)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s (%s) from %s\n", p.Ref.Name, got.Version, got.Binary, got.From)
			}
			if len(errs) > 0 {
				return exitCode(1, errors.Join(errs...))
			}
			return nil
		},
	}
	rf.add(cmd)
	return cmd
}

func (g *globals) installOne(ctx context.Context, inst *distribution.Installer, ref spec.PluginRef, lockFile string) (distribution.Installed, error) {
	r, err := distribution.ParseRef(ref.Source, ref.Version)
	if err != nil {
		return distribution.Installed{}, fmt.Errorf("plugin %s: %v", ref.Name, err)
	}
	if err := g.checkSourcePolicy(ref, r); err != nil {
		return distribution.Installed{}, err
	}
	pin, err := ociPin(lockFile, ref.Name, sourceText(ref))
	if err != nil {
		return distribution.Installed{}, err
	}
	got, err := inst.Install(ctx, r, distribution.CurrentPlatform(), pin)
	if err != nil {
		return distribution.Installed{}, fmt.Errorf("plugin %s: %v", ref.Name, err)
	}
	return got, nil
}

func newPluginsMirrorCmd(g *globals) *cobra.Command {
	var rf registryFlags
	cmd := &cobra.Command{
		Use:   "mirror DIR",
		Short: "Copy every plugin with an oci:// source of the agent (all platforms, signatures) into DIR as OCI image layouts",
		Long: "Writes DIR/REGISTRY/REPOSITORY as an OCI image layout for each plugin source, at the index the\n" +
			"lock file pins (else the one its tag resolves to), with every platform and its signatures. A\n" +
			"machine whose configuration lists DIR in plugin_mirrors installs from it without the registry,\n" +
			"with the same verification.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			plugins, err := g.sourcePlugins()
			if err != nil {
				return err
			}
			lockFile := agent.LockFileFor(g.agentPath)
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			for _, p := range plugins {
				r, err := distribution.ParseRef(p.Ref.Source, p.Ref.Version)
				if err != nil {
					return exitCode(2, fmt.Errorf("plugin %s: %v", p.Ref.Name, err))
				}
				t, err := distribution.Remote(r, rf.options())
				if err != nil {
					return exitCode(2, err)
				}
				pin, err := ociPin(lockFile, p.Ref.Name, sourceText(p.Ref))
				if err != nil {
					return exitCode(2, err)
				}
				index, version := "", ""
				if pin != nil {
					index, version = pin.Index, pin.Version
				} else {
					v, d, err := distribution.ResolveIndex(ctx, t, r)
					if err != nil {
						return exitCode(1, err)
					}
					index, version = d.Digest.String(), v
				}
				if err := distribution.Mirror(ctx, t, r, index, version, args[0]); err != nil {
					return exitCode(1, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "mirrored %s %s (%s) into %s\n", p.Ref.Name, version, index, args[0])
			}
			return nil
		},
	}
	rf.add(cmd)
	return cmd
}
