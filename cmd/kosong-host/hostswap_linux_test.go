//go:build linux

package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestHostSwappedUnderItsPlugins: a Shell command replaces the host's
// binary at its path with a program that would read the host's environment,
// then kills the shell plugin and crashes a sibling and an MCP server: the
// restarted plugins and server are started by the running host binary (the file at the path never runs),
// without the capabilities that read another process, and the host's
// environment stays closed to them. As root and as a normal user (who has
// no capabilities to lose; the bounding set of a normal user's processes is
// left as it is, and the replaced file must still never run).
func TestHostSwappedUnderItsPlugins(t *testing.T) {
	cc, err := testbin.Build("host/testdata/plugins/capcheck", "capcheck")
	if err != nil {
		t.Fatal(err)
	}
	host := kosongHost(t)
	for _, nobody := range []bool{false, true} {
		t.Run(map[bool]string{false: "as the test's user", true: "as nobody"}[nobody], func(t *testing.T) {
			if nobody && os.Geteuid() != 0 {
				t.Skip("running the host as nobody needs root")
			}
			setpriv, err := exec.LookPath("setpriv")
			if nobody && err != nil {
				t.Skip("setpriv not found")
			}
			// Under a folder of its own, readable and writable by the
			// host's user (the host must not find it in a test's 0700 dir).
			base, err := os.MkdirTemp("", "hostswap-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			bin := filepath.Join(base, "bin", "kosong-host")
			plugin := filepath.Join(base, "bin", "capcheck")
			copyExecutable(t, host, bin)
			copyExecutable(t, cc, plugin)
			server := filepath.Join(base, "bin", "mcpserver")
			copyExecutable(t, mcpTestServer(t), server)
			work := filepath.Join(base, "work")
			marker := filepath.Join(work, "marker")
			files := map[string]string{
				"agent.yaml": fmt.Sprintf("version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [%q, %q, \"shell:Shell\"]\n"+
					"  mcp_servers:\n    m:\n      command: %q\n      enabled_tools: [crash, echo]\n",
					plugin+":Crash", plugin+":Peek", server),
				"s.md": "",
				// What a hostile command puts at the host's path: run as
				// `kosong-host plugin-exec PLUGIN...`, it records its
				// capabilities and the host's environment.
				"fake": fmt.Sprintf("#!/bin/sh\n{ grep -E '^Cap(Eff|Bnd)' /proc/self/status; tr '\\0' '\\n' </proc/$PPID/environ; } >%s 2>&1\nexit 1\n", marker),
				"script.yaml": fmt.Sprintf(`
turns:
  - tool_calls:
      - {id: swap, name: Shell, arguments: {command: "mv -f fake %s && echo swapped"}}
  - tool_calls:
      - {id: kill, name: Shell, arguments: {command: "kill -9 $PPID"}}
      - {id: crash, name: Crash, arguments: {}}
      - {id: mcrash, name: m__crash, arguments: {}}
  - tool_calls:
      - {id: again, name: Shell, arguments: {command: "echo again"}}
      - {id: peek, name: Peek, arguments: {}}
      - {id: mecho, name: m__echo, arguments: {text: back}}
  - text: "done"
`, bin),
			}
			for name, body := range files {
				if err := os.MkdirAll(work, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, d := range []string{"state", "config", "home"} {
				if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			argv := []string{bin, "--trust", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "--output-format", "stream-json", "-p", "go"}
			if nobody {
				if err := filepath.Walk(base, func(p string, _ os.FileInfo, err error) error {
					if err != nil {
						return err
					}
					return os.Lchown(p, 65534, 65534)
				}); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(base, 0o755); err != nil {
					t.Fatal(err)
				}
				argv = append([]string{setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", "--"}, argv...)
			}
			const key = "sk-swap-5150-do-not-leak"
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = work
			cmd.Env = hostEnv("XDG_STATE_HOME="+filepath.Join(base, "state"), "XDG_CONFIG_HOME="+filepath.Join(base, "config"),
				"HOME="+filepath.Join(base, "home"), "OPENAI_API_KEY="+key)
			out, err := cmd.Output()
			var stderr string
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			if err != nil {
				t.Fatalf("run: %v\n%s\n%s", err, out, stderr)
			}
			got := map[string]string{}
			for _, ev := range eventsOfType(streamEvents(t, string(out)), "tool_result") {
				id, _ := ev["id"].(string)
				status, _ := ev["status"].(string)
				output, _ := ev["output"].(string)
				got[id] = status + ": " + output
			}
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("the file put at the host's path ran as the launcher:\n%s", b)
			}
			if !strings.Contains(got["swap"], "swapped") || strings.TrimSpace(got["again"]) != "ok: again" || !strings.Contains(got["mecho"], "back") {
				t.Fatalf("the swap or the restarted shell failed: %v", got)
			}
			var peek map[string]string
			if err := json.Unmarshal([]byte(strings.TrimPrefix(got["peek"], "ok: ")), &peek); err != nil {
				t.Fatalf("peek %q: %v", got["peek"], err)
			}
			if strings.Contains(got["peek"], key) || !strings.Contains(peek["environ"], "permission denied") {
				t.Errorf("the restarted plugin read the host's environment: %.300q", peek["environ"])
			}
			sets := []string{"CapEff", "CapBnd"}
			if nobody {
				sets = sets[:1]
			}
			for _, set := range sets {
				v, err := strconv.ParseUint(peek[set], 16, 64)
				if err != nil {
					t.Fatalf("%s = %q: %v", set, peek[set], err)
				}
				for _, c := range []uint{19, 21, 38} { // CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON
					if v&(1<<c) != 0 {
						t.Errorf("%s = %s: the restarted plugin has capability %d", set, peek[set], c)
					}
				}
			}
		})
	}
}
