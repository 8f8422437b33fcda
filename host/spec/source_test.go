package spec

import (
	"strings"
	"testing"
)

func TestSource(t *testing.T) {
	s, _ := loadTools(t, `    - plugin: greet
      source: oci://ghcr.io/team/greet
      version: "~> 1.2"
      tools: [Greet]
    - plugin: greet
      source: oci://ghcr.io/team/greet
      version: "~> 1.2"
      tools: [Wave]
`)
	ps, err := s.Plugins()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Source != "oci://ghcr.io/team/greet" || ps[0].Version != "~> 1.2" || ps[0].Lookup != "greet" {
		t.Fatalf("plugins = %+v", ps)
	}
}

func TestSourceErrors(t *testing.T) {
	sum := strings.Repeat("a", 64)
	tests := []struct{ tools, want string }{
		{"    - plugin: ./bin/greet\n      source: oci://ghcr.io/team/greet:1.0\n", "named by a bare name, not a path"},
		{"    - plugin: greet\n      source: ghcr.io/team/greet:1.0\n", "want oci://"},
		{"    - plugin: greet\n      source: oci://ghcr.io/team/greet:1.0\n      sha256: " + sum + "\n", "sha256 pins a local binary"},
		{"    - plugin: greet\n      version: \"~> 1.0\"\n", "version goes with a source"},
		{"    - plugin: greet\n      source: oci://ghcr.io/team/greet:1.0\n      version: \"~> 1.0\"\n", "without tag or digest"},
		{"    - plugin: greet\n      source: oci://ghcr.io/team/greet\n      version: \"~> banana\"\n", `version "~> banana"`},
	}
	for _, tc := range tests {
		_, _, err := load(t, map[string]string{
			"agent.yaml": "agent:\n  name: a\n  system_prompt_path: s.md\n  tools:\n" + tc.tools,
		}, "agent.yaml", LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "agent.yaml:") {
			t.Errorf("%q: err = %v, want %q", tc.tools, err, tc.want)
		}
	}
	s, _ := loadTools(t, "    - plugin: greet\n      source: oci://ghcr.io/team/greet:1.0\n    - plugin: greet\n      source: oci://ghcr.io/team/greet:2.0\n")
	if _, err := s.Plugins(); err == nil || !strings.Contains(err.Error(), "source conflicts") {
		t.Errorf("two sources: %v", err)
	}
}
