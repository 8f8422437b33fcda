package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const example = `plugin_sources:
  - ghcr.io/acme/*
required_signers:
  - repositories: [ghcr.io/acme/*]
    keys: [/etc/kosong-host/keys/acme.pub]
mcp_servers:
  commands: [/usr/local/bin/*]
  urls: [https://mcp.acme.example/*]
project_plugins: false
forced:
  telemetry_endpoint: https://otel.acme.example:4318
  yolo: forbidden
`

func TestDecisions(t *testing.T) {
	p, err := Parse("/etc/kosong-host/policy.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want string // "" = allowed
	}{
		{"allowed source", p.CheckSource("ghcr.io/acme/greet"), ""},
		{"forbidden source", p.CheckSource("docker.io/evil/greet"), "plugin source oci://docker.io/evil/greet is refused by the admin policy /etc/kosong-host/policy.yaml (rule plugin_sources: ghcr.io/acme/*)"},
		{"project plugin", p.CheckProjectPlugin("greet", "/w/.kosong/agent.yaml"), "rule project_plugins: false"},
		{"MCP command", p.CheckMCPCommand("files", "/tmp/files"), "rule mcp_servers.commands"},
		{"MCP command allowed", p.CheckMCPCommand("files", "/usr/local/bin/files"), ""},
		{"MCP URL", p.CheckMCPURL("web", "https://evil.example/mcp"), "rule mcp_servers.urls"},
		{"yolo", p.CheckYolo(), "--yolo is refused by the admin policy /etc/kosong-host/policy.yaml (rule forced.yolo: forbidden)"},
	}
	for _, tc := range tests {
		if tc.want == "" {
			if tc.err != nil {
				t.Errorf("%s: %v", tc.name, tc.err)
			}
			continue
		}
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	if got := p.Signers("ghcr.io/acme/greet"); len(got) != 1 {
		t.Errorf("signers = %v", got)
	}
	if p.Forced.TelemetryEndpoint != "https://otel.acme.example:4318" {
		t.Errorf("forced = %+v", p.Forced)
	}
}

func TestNoPolicyAllowsEverything(t *testing.T) {
	p, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if p.CheckSource("x/y") != nil || p.CheckYolo() != nil || p.CheckProjectPlugin("a", "b") != nil || p.CheckMCPCommand("a", "b") != nil {
		t.Fatal("an absent policy refused something")
	}
	empty := filepath.Join(t.TempDir(), "policy.yaml")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Load(empty); err != nil {
		t.Fatalf("empty policy: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ body, want string }{
		{"plugin_source: [x]\n", "field plugin_source not found"},
		{"forced: {yolo: maybe}\n", "forced.yolo: want forbidden or allowed"},
		{"required_signers: [{repositories: [a/*]}]\n", "required_signers[0]: want repositories and keys"},
		{"plugin_sources: ['[']\n", `bad pattern "["`},
		{"plugin_sources: [\n", "policy /p.yaml:"},
	}
	for _, tc := range tests {
		_, err := Parse("/p.yaml", []byte(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: err = %v, want %q", tc.body, err, tc.want)
		}
	}
	if got := Path(func(string) string { return "" }); got != DefaultPath {
		t.Errorf("Path = %s", got)
	}
	if got := Path(func(string) string { return "/x.yaml" }); got != "/x.yaml" {
		t.Errorf("Path = %s", got)
	}
}
