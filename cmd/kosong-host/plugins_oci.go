package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/kosong-host/kosong-host/host/distribution"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// registryFlags are how a command reaches a registry.
type registryFlags struct {
	plainHTTP    bool
	dockerConfig string
}

func (f *registryFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.plainHTTP, "plain-http", false, "reach a registry that is not on a loopback address over plain HTTP (a loopback one always is)")
	cmd.Flags().StringVar(&f.dockerConfig, "docker-config", "", "docker config file with the registry credentials or credential helpers (default $DOCKER_CONFIG/config.json, ~/.docker/config.json)")
}

func (f *registryFlags) options() distribution.Options {
	return distribution.Options{PlainHTTP: f.plainHTTP, DockerConfig: f.dockerConfig}
}

// describeBinary asks a plugin binary for this platform what it serves:
// its tools (schemas, capabilities, annotations) and protocol version, as
// JSON, and the tool names.
func describeBinary(ctx context.Context, path string) (json.RawMessage, []string, error) {
	p, err := plugin.Launch(ctx, plugin.Config{Name: "publish", Path: path, StartTimeout: plugin.DefaultStartTimeout, Logger: hclog.NewNullLogger()})
	if err != nil {
		return nil, nil, err
	}
	defer p.Close()
	names := make([]string, len(p.Tools))
	for i, t := range p.Tools {
		names[i] = t.Name
	}
	b, err := json.Marshal(struct {
		ProtocolVersion int
		Tools           []pluginrpc.ToolSpec
	}{pluginrpc.ProtocolVersion, p.Tools})
	return b, names, err
}

func newPluginsPublishCmd(g *globals) *cobra.Command {
	var (
		rf        registryFlags
		platforms []string
		signKey   string
	)
	cmd := &cobra.Command{
		Use:   "publish oci://REGISTRY/REPOSITORY:TAG --platform OS/ARCH=PATH ...",
		Short: "Push a plugin's binaries, one per platform, as one OCI image index (with its Describe output)",
		Long: "Pushes an image index with one manifest per platform; each manifest's config blob holds the\n" +
			"plugin's Describe output (asked of the binary for this machine's platform), so `plugins info`\n" +
			"shows its tools without running it. Credentials come from the docker config and its credential\n" +
			"helpers. With --sign KEY the index is signed (a cosign-compatible OCI 1.1 referrer).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := distribution.ParseRef(args[0], "")
			if err != nil {
				return exitCode(2, err)
			}
			if ref.Tag == "" || ref.Digest != "" {
				return exitCode(2, fmt.Errorf("publish %s: give a tag (oci://REGISTRY/REPOSITORY:TAG)", args[0]))
			}
			if len(platforms) == 0 {
				return exitCode(2, errors.New("publish: give at least one --platform OS/ARCH=PATH"))
			}
			var bins []distribution.Binary
			for _, p := range platforms {
				plat, path, ok := strings.Cut(p, "=")
				if !ok || path == "" {
					return exitCode(2, fmt.Errorf("--platform %q: want OS/ARCH=PATH", p))
				}
				if _, err := distribution.ParsePlatform(plat); err != nil {
					return exitCode(2, fmt.Errorf("--platform %q: %v", p, err))
				}
				if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
					return exitCode(2, fmt.Errorf("--platform %q: %s is not a file", p, path))
				}
				bins = append(bins, distribution.Binary{Platform: plat, Path: path})
			}
			var signer *signingKey
			if signKey != "" {
				if signer, err = loadSigningKey(signKey); err != nil {
					return exitCode(2, err)
				}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			var describe json.RawMessage
			var tools []string
			for _, b := range bins {
				if b.Platform == distribution.CurrentPlatform() {
					describe, tools, err = describeBinary(ctx, b.Path)
					if err != nil {
						return exitCode(1, fmt.Errorf("publish: the %s binary %s does not describe itself: %v", b.Platform, b.Path, err))
					}
				}
			}
			if describe == nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "kosong-host: no %s binary given: the artifact carries no Describe output\n", distribution.CurrentPlatform())
			}
			t, err := distribution.Remote(ref, rf.options())
			if err != nil {
				return exitCode(2, err)
			}
			d, err := distribution.Publish(ctx, t, ref.Tag, bins, describe, tools, ref.Tag)
			if err != nil {
				return exitCode(1, fmt.Errorf("publish %s: %v", ref, err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "published %s@%s (%d platforms)\n", ref, d.Digest, len(bins))
			if signer != nil {
				sig, err := signer.sign(ctx, t, ref, d)
				if err != nil {
					return exitCode(1, fmt.Errorf("sign %s@%s: %v", ref, d.Digest, err))
				}
				fmt.Fprintf(cmd.OutOrStdout(), "signed %s@%s: signature %s\n", ref, d.Digest, sig)
			}
			return nil
		},
	}
	rf.add(cmd)
	cmd.Flags().StringArrayVar(&platforms, "platform", nil, "OS/ARCH=PATH: the plugin binary for a platform (repeatable)")
	cmd.Flags().StringVar(&signKey, "sign", "", "sign the published index with this private key (from `kosong-host plugins keygen`)")
	cmd.Annotations = map[string]string{noAgentAnnotation: "yes"}
	return cmd
}

func newPluginsInfoCmd() *cobra.Command {
	var (
		rf      registryFlags
		version string
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "info oci://REGISTRY/REPOSITORY[:TAG|@sha256:DIGEST]",
		Short: "Show a published plugin: its version, index digest, platforms and tools, without running it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := distribution.ParseRef(args[0], version)
			if err != nil {
				return exitCode(2, err)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 2*time.Minute)
			defer cancel()
			t, err := distribution.Remote(ref, rf.options())
			if err != nil {
				return exitCode(2, err)
			}
			info, err := distribution.ReadInfo(ctx, t, ref)
			if err != nil {
				return exitCode(1, err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, _ := json.MarshalIndent(info, "", "  ")
				fmt.Fprintln(out, string(b))
				return nil
			}
			fmt.Fprintf(out, "Reference: %s\nVersion:   %s\nIndex:     %s\n", info.Ref, info.Version, info.Index)
			plats := make([]string, 0, len(info.Platforms))
			for p := range info.Platforms {
				plats = append(plats, p)
			}
			sort.Strings(plats)
			for _, p := range plats {
				e := info.Platforms[p]
				fmt.Fprintf(out, "Platform:  %s  manifest %s  binary %s (%d bytes)\n", p, e.Manifest.Digest, e.Binary.Digest, e.Binary.Size)
			}
			var desc struct {
				ProtocolVersion int
				Tools           []pluginrpc.ToolSpec
			}
			if json.Unmarshal(info.Describe, &desc) == nil && len(desc.Tools) > 0 {
				fmt.Fprintf(out, "Protocol:  %d\nTools:\n", desc.ProtocolVersion)
				for _, t := range desc.Tools {
					fmt.Fprintf(out, "  %s: %s\n", t.Name, firstLineOf(t.Description))
				}
			} else {
				fmt.Fprintf(out, "Tools:     %s\n", orDash(info.Tools))
			}
			return nil
		},
	}
	rf.add(cmd)
	cmd.Flags().StringVar(&version, "version", "", "a semver constraint resolved against the repository's tags (e.g. \"~> 1.2\")")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Annotations = map[string]string{noAgentAnnotation: "yes"}
	return cmd
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
