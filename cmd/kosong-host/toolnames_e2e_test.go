package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// long70 is an MCP tool name of 70 characters, over every provider's limit.
var long70 = "read_" + strings.Repeat("x", 60) + "_file"

// namesAgent is an agent whose MCP server also offers the tools named in
// names.txt (one a line).
func namesAgent(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	list := filepath.Join(dir, "names.txt")
	if err := os.WriteFile(list, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return writeFiles(t, map[string]string{"s.md": "hi", "agent.yaml": fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools: ["echo:Echo"]
  mcp_servers:
    test:
      command: %q
      args: ["-extra-tools", %q]
      prefix: false
      enabled_tools: [echo, %q, %q]
`, mcpTestServer(t), list, names[0], names[len(names)-1])})
}

// TestToolNamesProvidersRefuse: MCP tools named files.read and with 70
// characters are offered to the model under sanitized names, listed beside
// their own, and calls come back to them.
func TestToolNamesProvidersRefuse(t *testing.T) {
	if len(long70) != 70 {
		t.Fatalf("len %d", len(long70))
	}
	work := namesAgent(t, "files.read", long70)
	sanitized := toolset.ModelName(long70)

	r := runHost(t, work, "", "tools", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "files.read (as files_read)") || !strings.Contains(r.stdout, long70+" (as "+sanitized+")") {
		t.Fatalf("tools list: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	srv := openaitest.NewValidatingServer(t,
		openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{Name: "files_read", Arguments: `{}`},
			{Name: sanitized, Arguments: `{}`},
		}},
		openaitest.Response{Text: []string{"Both answered."}},
	)
	env := []string{"OPENAI_API_KEY=x", "OPENAI_BASE_URL=" + srv.BaseURL()}
	r = runHostEnv(t, work, env, "", "run", "--yolo", "-p", "Read.")
	if r.code != 0 || !strings.Contains(r.stdout, "Both answered.") {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	valid := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	var offered []string
	for _, tool := range reqs[0].Chat.Tools {
		if !valid.MatchString(tool.Function.Name) {
			t.Errorf("offered tool name %q", tool.Function.Name)
		}
		offered = append(offered, tool.Function.Name)
	}
	if !strings.Contains(strings.Join(offered, ","), "files_read,"+sanitized) {
		t.Errorf("offered %q", offered)
	}
	var results []string
	for _, m := range reqs[1].Chat.Messages {
		if m.Role == "tool" {
			results = append(results, strings.TrimSpace(m.Text()))
		}
	}
	if want := "I am files.read|I am " + long70; strings.Join(results, "|") != want {
		t.Fatalf("results %q, want %q", results, want)
	}
}

// TestToolNamesClashAfterSanitizing: two tools that would be offered under
// one name fail the load, naming both.
func TestToolNamesClashAfterSanitizing(t *testing.T) {
	work := namesAgent(t, "files.read", "files_read")
	for _, args := range [][]string{{"tools", "list"}, {"validate"}} {
		r := runHost(t, work, "", args...)
		if r.code != 2 || !strings.Contains(r.stderr, "would both be offered to the model as files_read") ||
			!strings.Contains(r.stderr, "files.read (mcp server test") || !strings.Contains(r.stderr, "files_read (mcp server test") ||
			strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d\nstderr %s", args, r.code, r.stderr)
		}
	}
}
