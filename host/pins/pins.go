// Package pins reads and writes an agent's lock file: the sha256 pins of the
// plugin binaries a run of the agent uses (its subagents' included) and of
// the commands of its stdio MCP servers that are files (a path, not a name
// looked up in PATH), kept beside the agent file (agent.yaml ->
// agent.lock.yaml) so agent.yaml stays as its author wrote it.
package pins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
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

// Pin is one plugin's (or one MCP server command's) pin.
type Pin struct {
	// Path is where the file was found when it was locked, relative to
	// the lock file's folder (informative).
	Path   string `yaml:"path,omitempty"`
	SHA256 string `yaml:"sha256"`
}

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
		if !hexPin.MatchString(p.SHA256) {
			return nil, fmt.Errorf("%s: plugin %s: sha256 must be 64 lowercase hex digits", path, name)
		}
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

// Write writes the lock file atomically.
func Write(path string, f *File) error {
	var b bytes.Buffer
	b.WriteString("# Written by `kosong-host plugins lock`: sha256 pins of this agent's plugin\n")
	b.WriteString("# binaries and MCP server commands, checked before each one is started.\n")
	b.WriteString("# Commit it with the agent.\n")
	fmt.Fprintf(&b, "version: 1\nplugins:\n")
	writePins(&b, f.Plugins)
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

// FileSHA256 is the hex sha256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
