// Package pins reads and writes an agent's lock file: the sha256 pins of the
// plugin binaries a run of the agent uses (its subagents' included) and of
// the commands of its stdio MCP servers that are files (a path, not a name
// looked up in PATH), kept beside the agent file (agent.yaml ->
// agent.lock.yaml) so agent.yaml stays as its author wrote it.
package pins

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// File is a lock file.
type File struct {
	Version int            `yaml:"version"`
	Plugins map[string]Pin `yaml:"plugins"`
	// MCPServers pins the command of each stdio MCP server, by server name.
	MCPServers map[string]Pin `yaml:"mcp_servers,omitempty"`
}

// Pin is one plugin's (or one MCP server command's) pin: a local binary's
// sha256, a plugin installed from an OCI source (its index digest and each
// platform's manifest digest and binary sha256), or a built-in plugin
// (pinned by the host's version, never by the host binary's hash, so a
// teammate's build and the next upgrade still run).
type Pin struct {
	// Path is where the file was found when it was locked, relative to
	// the lock file's folder (informative).
	Path string `yaml:"path,omitempty"`
	// SHA256 pins a local binary. For a Source pin it is filled when the
	// file is read with this platform's binary sha256 (not written).
	SHA256 string `yaml:"sha256,omitempty"`
	// Builtin is the version of kosong-host that served the built-in
	// plugin when it was locked (informative: a built-in is part of the
	// host).
	Builtin string `yaml:"builtin,omitempty"`
	// Source, Version and Index pin an OCI plugin: its source as written,
	// the version (tag) it resolved to and the image index's digest.
	Source  string `yaml:"source,omitempty"`
	Version string `yaml:"version,omitempty"`
	Index   string `yaml:"index,omitempty"`
	// Platforms are each locked platform's (os/arch) manifest digest and
	// binary sha256.
	Platforms map[string]PlatformPin `yaml:"platforms,omitempty"`
}

// PlatformPin is one platform of an OCI plugin's pin.
type PlatformPin struct {
	Manifest string `yaml:"manifest"`
	SHA256   string `yaml:"sha256"`
}

// Platform is the os/arch whose binary a Source pin's SHA256 is filled
// with (this machine's).
var Platform = runtime.GOOS + "/" + runtime.GOARCH

var digestPin = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

var hexPin = regexp.MustCompile(`^[0-9a-f]{64}$`)

// PathFor is the lock file of an agent file: agent.yaml -> agent.lock.yaml.
func PathFor(agentPath string) string {
	ext := filepath.Ext(agentPath)
	return strings.TrimSuffix(agentPath, ext) + ".lock" + ext
}

// Read reads a lock file; a missing file is an empty lock and no error.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &File{Version: 1, Plugins: map[string]Pin{}, MCPServers: map[string]Pin{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %s", path, strings.ReplaceAll(err.Error(), "\n", " "))
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: unsupported lock file version %d", path, f.Version)
	}
	for name, p := range f.Plugins {
		if err := checkPluginPin(&p); err != nil {
			return nil, fmt.Errorf("%s: plugin %s: %v", path, name, err)
		}
		f.Plugins[name] = p
	}
	for name, p := range f.MCPServers {
		if !hexPin.MatchString(p.SHA256) {
			return nil, fmt.Errorf("%s: MCP server %s: sha256 must be 64 lowercase hex digits", path, name)
		}
	}
	if f.Plugins == nil {
		f.Plugins = map[string]Pin{}
	}
	if f.MCPServers == nil {
		f.MCPServers = map[string]Pin{}
	}
	return &f, nil
}

// checkPluginPin checks one plugin's pin and fills a Source pin's SHA256
// with this platform's.
func checkPluginPin(p *Pin) error {
	switch {
	case p.Source != "":
		if !digestPin.MatchString(p.Index) {
			return fmt.Errorf("index must be sha256: and 64 lowercase hex digits")
		}
		if len(p.Platforms) == 0 {
			return fmt.Errorf("no platforms: run `kosong-host plugins lock --platform OS/ARCH`")
		}
		for plat, pp := range p.Platforms {
			if !digestPin.MatchString(pp.Manifest) || !hexPin.MatchString(pp.SHA256) {
				return fmt.Errorf("platform %s: want manifest: sha256:HEX and sha256: 64 lowercase hex digits", plat)
			}
		}
		if p.SHA256 != "" {
			return fmt.Errorf("an OCI plugin's sha256 goes under platforms")
		}
		p.SHA256 = p.Platforms[Platform].SHA256
	case p.Builtin != "":
		if p.SHA256 != "" {
			return fmt.Errorf("a built-in plugin is pinned by the host's version, not by sha256")
		}
	case !hexPin.MatchString(p.SHA256):
		return fmt.Errorf("sha256 must be 64 lowercase hex digits")
	}
	return nil
}

// Write writes the lock file atomically.
func Write(path string, f *File) error {
	var b bytes.Buffer
	b.WriteString("# Written by `kosong-host plugins lock`: sha256 pins of this agent's plugin\n")
	b.WriteString("# binaries and MCP server commands, checked before each one is started;\n")
	b.WriteString("# plugins from OCI sources by digest, for every locked platform; built-in\n")
	b.WriteString("# plugins by the version of kosong-host (informative).\n")
	b.WriteString("# Commit it with the agent.\n")
	fmt.Fprintf(&b, "version: 1\nplugins:\n")
	writePlugins(&b, f.Plugins)
	if len(f.MCPServers) > 0 {
		fmt.Fprintf(&b, "mcp_servers:\n")
		writePins(&b, f.MCPServers)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".lock-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func writePins(b *bytes.Buffer, pins map[string]Pin) {
	names := make([]string, 0, len(pins))
	for n := range pins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := pins[n]
		fmt.Fprintf(b, "  %s:\n    path: %q\n    sha256: %s\n", n, p.Path, p.SHA256)
	}
}

func writePlugins(b *bytes.Buffer, pins map[string]Pin) {
	names := make([]string, 0, len(pins))
	for n := range pins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := pins[n]
		switch {
		case p.Source != "":
			fmt.Fprintf(b, "  %s:\n    source: %q\n", n, p.Source)
			if p.Version != "" {
				fmt.Fprintf(b, "    version: %q\n", p.Version)
			}
			fmt.Fprintf(b, "    index: %s\n    platforms:\n", p.Index)
			plats := make([]string, 0, len(p.Platforms))
			for pl := range p.Platforms {
				plats = append(plats, pl)
			}
			sort.Strings(plats)
			for _, pl := range plats {
				fmt.Fprintf(b, "      %s:\n        manifest: %s\n        sha256: %s\n", pl, p.Platforms[pl].Manifest, p.Platforms[pl].SHA256)
			}
		case p.Builtin != "":
			fmt.Fprintf(b, "  %s:\n    builtin: %q\n", n, p.Builtin)
		default:
			fmt.Fprintf(b, "  %s:\n    path: %q\n    sha256: %s\n", n, p.Path, p.SHA256)
		}
	}
}
