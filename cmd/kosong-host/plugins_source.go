package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/distribution"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/spec"
)

// sourceInstaller is the installer of plugins with an OCI source, set up
// from the configuration (plugin_mirrors, plugin_trust) and the admin
// policy.
func (g *globals) sourceInstaller(opts distribution.Options) (*distribution.Installer, error) {
	cache, err := distribution.DefaultCache()
	if err != nil {
		return nil, err
	}
	cfg, err := loadConfigFile(g.configPath)
	if err != nil {
		return nil, err
	}
	mirrors, err := stringList(cfg.PluginMirrors, cfg.Path, "plugin_mirrors")
	if err != nil {
		return nil, err
	}
	verify, err := g.sourceVerifier(cfg)
	if err != nil {
		return nil, err
	}
	return &distribution.Installer{Cache: cache, Options: opts, Mirrors: mirrors, Verify: verify}, nil
}

// stringList decodes a list of strings written in file.
func stringList(n *yaml.Node, file, field string) ([]string, error) {
	if n == nil {
		return nil, nil
	}
	var out []string
	if err := n.Decode(&out); err != nil {
		return nil, fmt.Errorf("config %s: line %d: %s: want a list of directories or oci://HOST registries", file, n.Line, field)
	}
	return out, nil
}

// ociPin is the run's lock file's pin of the plugin named name installed
// from source (nil when not locked).
func ociPin(lockFile, name, source string) (*distribution.Pin, error) {
	lock, err := pins.Read(lockFile)
	if err != nil {
		return nil, err
	}
	p, ok := lock.Plugins[name]
	if !ok || p.Source == "" {
		return nil, nil
	}
	if p.Source != source {
		return nil, fmt.Errorf("plugin %s: the lock file %s pins source %s, the agent file says %s: run `kosong-host plugins lock`", name, lockFile, p.Source, source)
	}
	out := &distribution.Pin{Version: p.Version, Index: p.Index, Platforms: map[string]distribution.PlatformPin{}}
	for plat, pp := range p.Platforms {
		out.Platforms[plat] = distribution.PlatformPin{Manifest: pp.Manifest, SHA256: pp.SHA256}
	}
	return out, nil
}

// sourceText is a reference's source as the lock file records it.
func sourceText(ref spec.PluginRef) string {
	if ref.Version != "" {
		return ref.Source + " " + ref.Version
	}
	return ref.Source
}

var installMu sync.Mutex

// installSource finds the binary of a plugin with an OCI source in the
// cache, verified against the run's lock file, and installs it when it is
// missing, saying so on stderr.
func (g *globals) installSource(ref spec.PluginRef) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()
	r, err := distribution.ParseRef(ref.Source, ref.Version)
	if err != nil {
		return "", fmt.Errorf("plugin %s: %v", ref.Name, err)
	}
	if err := g.checkSourcePolicy(ref, r); err != nil {
		return "", err
	}
	pin, err := ociPin(agent.LockFileFor(g.agentPath), ref.Name, sourceText(ref))
	if err != nil {
		return "", err
	}
	inst, err := g.sourceInstaller(distribution.Options{})
	if err != nil {
		return "", fmt.Errorf("plugin %s: %v", ref.Name, err)
	}
	platform := distribution.CurrentPlatform()
	if c, ok := inst.Cached(r, platform, pin); ok {
		return c.Path, nil
	}
	fmt.Fprintf(os.Stderr, "kosong-host: plugin %s is not in the plugin cache: installing it from %s\n", ref.Name, r)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	got, err := inst.Install(ctx, r, platform, pin)
	if err != nil {
		return "", fmt.Errorf("plugin %s: %v", ref.Name, err)
	}
	fmt.Fprintf(os.Stderr, "kosong-host: installed plugin %s %s (%s) from %s\n", ref.Name, got.Version, got.Binary, got.From)
	return got.Path, nil
}
