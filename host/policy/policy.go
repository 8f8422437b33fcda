// Package policy reads the admin policy file, which the user cannot
// override: /etc/kosong-host/policy.yaml, or the file KOSONG_HOST_POLICY
// names (set by whoever manages the machine's environment, e.g. in
// /etc/environment or a CI runner's image; anyone who can set the
// variable for a process can point it at another policy, so it is an
// admin's knob, not a user's). It says which plugin sources are allowed,
// which keys must sign which repositories, which MCP servers may run,
// whether project agent files may add plugins, and settings forced on
// every run. Every refusal names the file and the rule.
//
//	plugin_sources:                  # allowed oci:// sources (REGISTRY/REPOSITORY patterns)
//	  - ghcr.io/acme/*
//	required_signers:                # sources matching a rule must be signed by one of its keys
//	  - repositories: [ghcr.io/acme/*]
//	    keys: [/etc/kosong-host/keys/acme.pub]
//	mcp_servers:                     # allowed MCP servers: commands and URLs (patterns)
//	  commands: [/usr/local/bin/*]
//	  urls: [https://mcp.acme.example/*]
//	project_plugins: false           # a project agent file may not add plugins
//	forced:
//	  telemetry_endpoint: https://otel.acme.example:4318
//	  yolo: forbidden
//
// Patterns are path.Match patterns ('*' stays within one path element,
// '**' is not special); an absent list allows everything.
package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"gopkg.in/yaml.v3"
)

// DefaultPath is the policy file when KOSONG_HOST_POLICY is not set.
const DefaultPath = "/etc/kosong-host/policy.yaml"

// EnvVar names another policy file.
const EnvVar = "KOSONG_HOST_POLICY"

// Policy is an admin policy; the zero Policy allows everything.
type Policy struct {
	// Path is the file read ("" when there is none).
	Path            string      `yaml:"-"`
	PluginSources   []string    `yaml:"plugin_sources"`
	RequiredSigners []TrustRule `yaml:"required_signers"`
	MCPServers      *MCPServers `yaml:"mcp_servers"`
	ProjectPlugins  *bool       `yaml:"project_plugins"`
	Forced          Forced      `yaml:"forced"`
	lines           policyLines `yaml:"-"`
}

type policyLines struct{ sources, signers, mcp, project, yolo, telemetry int }

// TrustRule says that sources matching Repositories must be signed by one
// of Keys (PEM public key files). The same shape is the configuration's
// plugin_trust.
type TrustRule struct {
	Repositories []string `yaml:"repositories"`
	Keys         []string `yaml:"keys"`
}

// Matches reports whether the rule covers REGISTRY/REPOSITORY repo.
func (r TrustRule) Matches(repo string) bool { return matchAny(r.Repositories, repo) }

// MCPServers are the allowed MCP servers.
type MCPServers struct {
	Commands []string `yaml:"commands"`
	URLs     []string `yaml:"urls"`
}

// Forced are settings forced on every run.
type Forced struct {
	TelemetryEndpoint string `yaml:"telemetry_endpoint"`
	// Yolo is "forbidden" to refuse --yolo (auto-approving tool calls).
	Yolo string `yaml:"yolo"`
}

// Path is the policy file in force: KOSONG_HOST_POLICY, else DefaultPath.
func Path(getenv func(string) string) string {
	if p := getenv(EnvVar); p != "" {
		return p
	}
	return DefaultPath
}

// Load reads the policy file at path; a missing file is no policy.
func Load(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Policy{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("policy %s: %v", path, err)
	}
	return Parse(path, b)
}

// Parse checks data, the content of the policy file at path.
func Parse(path string, data []byte) (*Policy, error) {
	p := &Policy{Path: path}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("policy %s: %s", path, strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: "), "\n", " "))
	}
	p.Path = path
	if p.Forced.Yolo != "" && p.Forced.Yolo != "forbidden" && p.Forced.Yolo != "allowed" {
		return nil, fmt.Errorf("policy %s: forced.yolo: want forbidden or allowed, got %q", path, p.Forced.Yolo)
	}
	for i, r := range p.RequiredSigners {
		if len(r.Repositories) == 0 || len(r.Keys) == 0 {
			return nil, fmt.Errorf("policy %s: required_signers[%d]: want repositories and keys", path, i)
		}
	}
	for _, pat := range append(append([]string(nil), p.PluginSources...), p.mcpPatterns()...) {
		if _, err := path2Match(pat, ""); err != nil {
			return nil, fmt.Errorf("policy %s: bad pattern %q", path, pat)
		}
	}
	return p, nil
}

func (p *Policy) mcpPatterns() []string {
	if p.MCPServers == nil {
		return nil
	}
	return append(append([]string(nil), p.MCPServers.Commands...), p.MCPServers.URLs...)
}

var path2Match = path.Match

func matchAny(patterns []string, s string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, s); ok {
			return true
		}
	}
	return false
}

// Refusal is a decision against something, naming the file and the rule.
type Refusal struct {
	File, Rule, What string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("%s is refused by the admin policy %s (rule %s)", r.What, r.File, r.Rule)
}

// CheckSource decides whether a plugin may come from repo
// (REGISTRY/REPOSITORY).
func (p *Policy) CheckSource(repo string) error {
	if p.PluginSources == nil || matchAny(p.PluginSources, repo) {
		return nil
	}
	return &Refusal{File: p.Path, Rule: "plugin_sources: " + strings.Join(p.PluginSources, ", "), What: "plugin source oci://" + repo}
}

// CheckProjectPlugin decides whether a project agent file (one from the
// work dir, not the user's or the built-in) may add plugin name.
func (p *Policy) CheckProjectPlugin(name, agentFile string) error {
	if p.ProjectPlugins == nil || *p.ProjectPlugins {
		return nil
	}
	return &Refusal{File: p.Path, Rule: "project_plugins: false", What: fmt.Sprintf("plugin %s added by the project agent file %s", name, agentFile)}
}

// CheckMCPCommand decides whether a stdio MCP server with command may run.
func (p *Policy) CheckMCPCommand(name, command string) error {
	if p.MCPServers == nil || p.MCPServers.Commands == nil || matchAny(p.MCPServers.Commands, command) {
		return nil
	}
	return &Refusal{File: p.Path, Rule: "mcp_servers.commands: " + strings.Join(p.MCPServers.Commands, ", "), What: fmt.Sprintf("MCP server %s (command %s)", name, command)}
}

// CheckMCPURL decides whether an MCP server at url may be used.
func (p *Policy) CheckMCPURL(name, url string) error {
	if p.MCPServers == nil || p.MCPServers.URLs == nil || matchAny(p.MCPServers.URLs, url) {
		return nil
	}
	return &Refusal{File: p.Path, Rule: "mcp_servers.urls: " + strings.Join(p.MCPServers.URLs, ", "), What: fmt.Sprintf("MCP server %s (%s)", name, url)}
}

// CheckYolo decides whether --yolo may be used.
func (p *Policy) CheckYolo() error {
	if p.Forced.Yolo != "forbidden" {
		return nil
	}
	return &Refusal{File: p.Path, Rule: "forced.yolo: forbidden", What: "--yolo"}
}

// Signers are the rules of RequiredSigners covering repo, with their
// index (for messages).
func (p *Policy) Signers(repo string) []int {
	var out []int
	for i, r := range p.RequiredSigners {
		if r.Matches(repo) {
			out = append(out, i)
		}
	}
	return out
}
