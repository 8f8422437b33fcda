package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestACPReload: the `_kosong/reload` extension method reloads a session's
// agent (a plugin added to agent.yaml is started, the running one kept); a
// broken edit and an unknown session are errors.
func TestACPReload(t *testing.T) {
	two := "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"shell:Shell\", \"echo:Echo\"]\n"
	work := writeFiles(t, map[string]string{"agent.yaml": guardAgent, "s.md": "hi", "script.yaml": "turns:\n  - text: hi\n"})
	c := startACP(t, work, emptyEnv(t), "--agent", filepath.Join(work, "agent.yaml"), "--provider", "scripted",
		"--script", filepath.Join(work, "script.yaml"))
	c.initialize()
	sess := c.newSession(work)

	if _, err := c.conn.CallExtension(c.ctx(), "_kosong/reload", map[string]any{"sessionId": "nope"}); err == nil ||
		!strings.Contains(err.Error(), `unknown session \"nope\"`) {
		t.Fatalf("reload of an unknown session: %v", err)
	}
	if err := os.WriteFile(filepath.Join(work, "agent.yaml"), []byte("version: 1\nagent: [broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.conn.CallExtension(c.ctx(), "_kosong/reload", map[string]any{"sessionId": sess.SessionId}); err == nil ||
		!strings.Contains(err.Error(), "Invalid YAML in agent spec file") {
		t.Fatalf("reload of a broken agent.yaml: %v", err)
	}
	if err := os.WriteFile(filepath.Join(work, "agent.yaml"), []byte(two), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := c.conn.CallExtension(c.ctx(), "_kosong/reload", map[string]any{"sessionId": sess.SessionId})
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	var res struct{ Started, Stopped, Kept, Tools []string }
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Started, ",") != "echo" || strings.Join(res.Kept, ",") != "shell" || len(res.Stopped) != 0 ||
		!strings.Contains(strings.Join(res.Tools, ","), "Echo") {
		t.Fatalf("reload: %s", raw)
	}
}
