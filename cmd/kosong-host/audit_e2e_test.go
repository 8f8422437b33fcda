package main_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAuditCommand: a run's tool calls are in its session's audit log, and
// `kosong-host audit` prints them: Echo needed no approval, Shell was
// denied (nobody to ask in an unattended run), each with its result.
func TestAuditCommand(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"echo:Echo\", \"shell:Shell\"]\n",
		"s.md": "hi", "script.yaml": `
turns:
  - tool_calls:
      - {id: e1, name: Echo, arguments: {text: hello}}
      - {id: s1, name: Shell, arguments: {command: "echo secret-argument-text"}}
  - text: "Done."
`})
	state := "XDG_STATE_HOME=" + t.TempDir()
	r := runHostEnv(t, dir, []string{state}, "", "run", "--provider", "scripted", "--script", "script.yaml", "-p", "go")
	if r.code != 3 { // done, a call refused
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runHostEnv(t, dir, []string{state}, "", "audit")
	if r.code != 0 {
		t.Fatalf("audit: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "e1") || !strings.Contains(lines[1], " ok ") ||
		!strings.Contains(lines[2], "s1") || !strings.Contains(lines[2], "denied (unattended)") {
		t.Errorf("audit:\n%s", r.stdout)
	}
	r = runHostEnv(t, dir, []string{state}, "", "audit", "--json")
	var calls []struct{ CallID, Tool, Status, ArgsSHA256, Plugin, Pin string }
	if err := json.Unmarshal([]byte(r.stdout), &calls); err != nil || len(calls) != 2 || strings.Contains(r.stdout, "secret-argument-text") {
		t.Errorf("audit --json (%v):\n%s", err, r.stdout)
	} else if calls[0].Plugin != "echo" || !strings.HasPrefix(calls[0].Pin, "builtin ") {
		t.Errorf("the Echo call's plugin and pin: %q %q", calls[0].Plugin, calls[0].Pin)
	}
	r = runHostEnv(t, dir, []string{state}, "", "audit", "no-such-session")
	if r.code != 2 || !strings.Contains(r.stderr, `no session "no-such-session"`) {
		t.Errorf("audit of a missing session: exit %d\n%s", r.code, r.stderr)
	}
}
