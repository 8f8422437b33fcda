package conversation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/policy"
)

// TestPolicyChecks: the admin policy's refusals of a conversation, each
// naming the policy file and rule; the work dir's and the project
// folder's agent files are the project's, others are not.
func TestPolicyChecks(t *testing.T) {
	const plugAgent = "version: 1\nagent:\n  name: p\n  system_prompt_path: ./s.md\n  tools: [\"./bin/plug:Echo\"]\n"
	const sourceAgent = "version: 1\nagent:\n  name: p\n  system_prompt_path: ./s.md\n  tools:\n    - {plugin: echo, source: \"oci://example.com/team/echo:1.0.0\", tools: [Echo]}\n"
	for _, tc := range []struct {
		name, policy, agent string
		yolo, elsewhere     bool // asks for yolo; the agent file is outside the project
		want                string
	}{
		{"no rule", "forced: {yolo: allowed}\n", plugAgent, true, false, ""},
		{"yolo", "forced: {yolo: forbidden}\n", bareAgent, true, false, "yolo (approving every action without asking) is refused by the admin policy POLICY (rule forced.yolo: forbidden)"},
		{"no yolo asked", "forced: {yolo: forbidden}\n", bareAgent, false, false, ""},
		{"project plugin by path", "project_plugins: false\n", plugAgent, false, false, "plugin plug added by the project agent file DIR/agent.yaml is refused by the admin policy POLICY (rule project_plugins: false)"},
		{"project plugin from a source", "project_plugins: false\n", sourceAgent, false, false, "plugin echo added by the project agent file DIR/agent.yaml is refused by the admin policy POLICY (rule project_plugins: false)"},
		{"plugin outside the project", "project_plugins: false\n", plugAgent, false, true, ""},
		{"source not allowed", "plugin_sources: [ghcr.io/acme/*]\n", sourceAgent, false, true, "plugin echo: plugin source oci://example.com/team/echo is refused by the admin policy POLICY (rule plugin_sources: ghcr.io/acme/*)"},
		{"bad policy", "forced: {yolo: maybe}\n", bareAgent, false, false, "policy POLICY: forced.yolo: want forbidden or allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := setup(t, map[string]string{"agent.yaml": tc.agent})
			dir := cfg.WorkDir
			pol := filepath.Join(t.TempDir(), "policy.yaml")
			if err := os.WriteFile(pol, []byte(tc.policy), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv(policy.EnvVar, pol)
			cfg.Yolo = tc.yolo
			if tc.elsewhere {
				cfg.WorkDir = t.TempDir()
			}
			err := CheckPolicy(cfg)
			want := strings.NewReplacer("POLICY", pol, "DIR", dir).Replace(tc.want)
			if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
				t.Fatalf("CheckPolicy: %v, want %q", err, want)
			}
		})
	}
}

// TestPolicyMCPConfigFile: an MCP server of an MCP configuration file
// (--mcp-config) is the agent's too.
func TestPolicyMCPConfigFile(t *testing.T) {
	cfg := setup(t, map[string]string{"mcp.json": `{"mcpServers": {"files": {"command": "/opt/files/mcp"}}}`})
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("mcp_servers: {commands: [/usr/local/bin/*]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(policy.EnvVar, pol)
	if err := CheckPolicy(cfg); err != nil {
		t.Fatalf("without the file: %v", err)
	}
	cfg.Load.MCPConfigFiles = []string{filepath.Join(cfg.WorkDir, "mcp.json")}
	want := "MCP server files (command /opt/files/mcp) is refused by the admin policy " + pol + " (rule mcp_servers.commands: /usr/local/bin/*)"
	if err := CheckPolicy(cfg); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("with the file: %v, want %q", err, want)
	}
}

// TestPolicyOnReload: a reload is refused before it reads an agent file
// that now adds a project plugin the policy forbids.
func TestPolicyOnReload(t *testing.T) {
	cfg := setup(t, nil)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("project_plugins: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(policy.EnvVar, pol)
	p, err := policy.Load(pol)
	if err != nil {
		t.Fatal(err)
	}
	allow := reloadAllowed(cfg, p)
	if err := allow(); err != nil {
		t.Fatalf("the unchanged agent: %v", err)
	}
	plug := "version: 1\nagent:\n  name: p\n  system_prompt_path: ./s.md\n  tools: [\"./bin/plug:Echo\"]\n"
	if err := os.WriteFile(cfg.AgentPath, []byte(plug), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := allow(); err == nil || !strings.Contains(err.Error(), "(rule project_plugins: false)") {
		t.Fatalf("the agent adding a plugin: %v", err)
	}
}
