package main_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestToolsCallShowsImages: `tools call` prints a line for each image of
// the result, after its text.
func TestToolsCallShowsImages(t *testing.T) {
	dir := writeFiles(t, map[string]string{"s.md": "hi", "agent.yaml": fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools: ["echo:Echo"]
  mcp_servers:
    test:
      command: %q
      enabled_tools: [media]
`, mcpTestServer(t))})
	r := runHost(t, dir, "", "--agent", "agent.yaml", "tools", "call", "--yolo", "test__media", "{}")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The server's two images (one embedded as a resource) are 8-byte PNGs.
	const images = "[image image/png, 8 bytes]\n[image image/png, 8 bytes]\n"
	if !strings.HasPrefix(r.stdout, "some text") || !strings.HasSuffix(r.stdout, images) {
		t.Fatalf("stdout %q, want the text, then %q", r.stdout, images)
	}
}
