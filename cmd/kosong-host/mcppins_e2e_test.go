package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/pins"
)

// TestMCPCommandPinned: `plugins lock` pins a stdio MCP server whose command
// is a file in the repository; a command changed behind the lock's back is
// reported by `plugins verify`, refused at load (the run does not start,
// one line naming the server, the lock file and both hashes), and refused
// when the server restarts mid-session after a command replaced it.
func TestMCPCommandPinned(t *testing.T) {
	kosongHost(t)
	dir := writeFiles(t, map[string]string{
		"agent.yaml": "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"shell:Shell\"]\n" +
			"  mcp_servers:\n    repo:\n      command: ./tools/server\n      enabled_tools: [echo, crash]\n" +
			"    npx:\n      command: sh\n      args: [-c, 'exit 1']\n      disabled: true\n",
		"s.md": "",
		// The server is replaced by a command (a rename: the running file
		// is busy), then crashes; the next call restarts it.
		"script.yaml": `
turns:
  - tool_calls:
      - {id: e1, name: repo__echo, arguments: {text: one}}
  - tool_calls:
      - {id: swap, name: Shell, arguments: {command: "cp tools/server tools/new && printf x >>tools/new && mv tools/new tools/server && echo swapped"}}
  - tool_calls:
      - {id: crash, name: repo__crash, arguments: {}}
  - tool_calls:
      - {id: e2, name: repo__echo, arguments: {text: two}}
  - text: "done"
`,
	})
	server := filepath.Join(dir, "tools", "server")
	copyExecutable(t, mcpTestServer(t), server)
	lockPath := filepath.Join(dir, "agent.lock.yaml")
	if r := runHost(t, dir, "", "plugins", "lock"); r.code != 0 || !strings.Contains(r.stdout, "wrote 2 pins to ") {
		t.Fatalf("lock: %+v", r)
	}
	lock, _ := os.ReadFile(lockPath)
	if !strings.Contains(string(lock), "mcp_servers:\n  repo:\n    path: \"tools/server\"\n") || strings.Contains(string(lock), "npx") {
		t.Fatalf("lock file:\n%s", lock)
	}
	if r := runHost(t, dir, "", "plugins", "verify"); r.code != 0 || !regexp.MustCompile(`mcp:repo +ok \(lock file\) +`+regexp.QuoteMeta(server)).MatchString(r.stdout) {
		t.Fatalf("verify: %+v", r)
	}
	good, _ := pins.FileSHA256(server)

	// Replaced during a session: the restart is refused.
	r := runHost(t, dir, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "--output-format", "stream-json", "-p", "go")
	got := map[string]string{}
	for _, ev := range eventsOfType(streamEvents(t, r.stdout), "tool_result") {
		id, _ := ev["id"].(string)
		status, _ := ev["status"].(string)
		output, _ := ev["output"].(string)
		message, _ := ev["message"].(string)
		got[id] = status + ": " + message + output
	}
	bad, _ := pins.FileSHA256(server)
	mismatch := "MCP server repo: sha256 mismatch for " + server + ": lock file " + lockPath + " pins " + good +
		", the file is " + bad + "; if the change is intended, run `kosong-host plugins lock`"
	if !strings.Contains(got["e1"], "one") || !strings.Contains(got["swap"], "swapped") || good == bad {
		t.Fatalf("before the restart: %v\n%s", got, r.stderr)
	}
	if !strings.HasPrefix(got["e2"], "error") || !strings.Contains(got["e2"], mismatch) {
		t.Fatalf("the restarted server: %q\nwant an error containing %q\n%s", got["e2"], mismatch, r.stderr)
	}

	// At load: nothing starts.
	if r := runHost(t, dir, "", "plugins", "verify"); r.code != 1 ||
		!strings.Contains(r.stdout, "mcp:repo  MISMATCH: lock file "+lockPath+" pins "+good+", the file is "+bad) {
		t.Fatalf("verify after tampering: %+v", r)
	}
	r = runHost(t, dir, "", "tools", "list")
	if r.code == 0 || !strings.Contains(r.stderr, mismatch) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("tools list after tampering: %+v\nwant one line containing %q", r, mismatch)
	}
}
