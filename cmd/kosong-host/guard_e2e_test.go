package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const guardAgent = "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"shell:Shell\"]\n"

// TestHookBlocksRm: a PreToolUse hook (exit 2) blocks Shell(rm *) even
// under --yolo: the file stays, the model sees the hook's stderr, and
// stream-json shows the hook run.
func TestHookBlocksRm(t *testing.T) {
	agent := guardAgent + `  hooks:
    - event: PreToolUse
      matcher: "^Shell$"
      command: "grep -q '\"command\":\"rm ' && { echo 'rm is not allowed here' >&2; exit 2; }; exit 0"
`
	script := "turns:\n  - tool_calls: [{id: c1, name: Shell, arguments: {command: \"rm keep.txt\"}}]\n  - text: ok\n"
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi", "script.yaml": script, "keep.txt": "x"})
	r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "--output-format", "stream-json", "-p", "Clean up.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !fileExists(filepath.Join(work, "keep.txt")) {
		t.Fatal("keep.txt was removed")
	}
	evs := streamEvents(t, r.stdout)
	res := eventsOfType(evs, "tool_result")
	if len(res) != 1 || res[0]["message"] != "rm is not allowed here" || res[0]["brief"] != "Hook blocked" {
		t.Fatalf("tool results %v", res)
	}
	hooks := eventsOfType(evs, "hook")
	if len(hooks) != 1 || hooks[0]["action"] != "block" || hooks[0]["event"] != "PreToolUse" || hooks[0]["target"] != "Shell" {
		t.Fatalf("hook events %v", hooks)
	}
}

// TestDenyRuleHoldsUnderYolo: a deny rule stops the call under --yolo; the
// permission event names the rule and its file.
func TestDenyRuleHoldsUnderYolo(t *testing.T) {
	agent := guardAgent + "  permissions:\n    deny: [\"Shell(rm -rf *)\"]\n"
	script := "turns:\n  - tool_calls: [{id: c1, name: Shell, arguments: {command: \"echo hi && rm -rf data\"}}]\n  - text: ok\n"
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi", "script.yaml": script, "data/f": "x"})
	r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "--output-format", "stream-json", "-p", "Clean up.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !fileExists(filepath.Join(work, "data", "f")) {
		t.Fatal("data was removed")
	}
	evs := streamEvents(t, r.stdout)
	perms := eventsOfType(evs, "permission")
	if len(perms) != 1 || perms[0]["decision"] != "deny" || perms[0]["rule"] != "Shell(rm -rf *)" ||
		!strings.Contains(perms[0]["where"].(string), "agent.yaml:") {
		t.Fatalf("permission events %v", perms)
	}
	res := eventsOfType(evs, "tool_result")
	if len(res) != 1 || res[0]["status"] != "error" || !strings.Contains(res[0]["message"].(string), "Permission denied") {
		t.Fatalf("tool results %v", res)
	}
}

// TestAllowRuleOneShot: an allow rule answers Shell's approval request in a
// one-shot run without --yolo; a call no rule allows is still rejected.
func TestAllowRuleOneShot(t *testing.T) {
	agent := guardAgent + "  permissions:\n    allow: [\"Shell(git status*)\"]\n"
	script := "turns:\n  - tool_calls: [{id: c1, name: Shell, arguments: {command: \"git status\"}}]\n  - text: ok\n"
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi", "script.yaml": script})
	r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--output-format", "stream-json", "-p", "Status?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := streamEvents(t, r.stdout)
	approvals := eventsOfType(evs, "approval")
	if len(approvals) != 1 || approvals[0]["answer"] != "rule" || approvals[0]["approved"] != true {
		t.Fatalf("approval events %v", approvals)
	}
	res := eventsOfType(evs, "tool_result")
	if len(res) != 1 || res[0]["status"] == "rejected" {
		t.Fatalf("tool results %v", res)
	}

	// The same run with a compound command: not every part is allowed.
	script = "turns:\n  - tool_calls: [{id: c1, name: Shell, arguments: {command: \"git status; touch x\"}}]\n  - text: ok\n"
	if err := os.WriteFile(filepath.Join(work, "script.yaml"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--output-format", "stream-json", "-p", "Status?")
	if fileExists(filepath.Join(work, "x")) {
		t.Fatalf("the compound command ran\n%s", r.stdout)
	}
	res = eventsOfType(streamEvents(t, r.stdout), "tool_result")
	if len(res) != 1 || res[0]["status"] != "rejected" {
		t.Fatalf("tool results %v", res)
	}
}

// TestGuardLoadErrors: a rule naming an unknown tool, a malformed pattern
// and a bad hook fail the run with exit 2 and a line naming the rule and
// the file.
func TestGuardLoadErrors(t *testing.T) {
	for _, tc := range []struct{ name, extra, want string }{
		{"unknown tool", "  permissions:\n    deny: [\"Bash(rm *)\"]\n", `rule "Bash(rm *)": unknown tool Bash`},
		{"malformed pattern", "  permissions:\n    allow: [\"Shell(git [status)\"]\n", `rule "Shell(git [status)": malformed pattern`},
		{"unclosed", "  permissions:\n    ask: [\"Shell(git status\"]\n", `rule "Shell(git status": the pattern has no closing parenthesis`},
		{"unknown event", "  hooks:\n    - {event: PreTool, command: x}\n", `unknown event "PreTool"`},
		{"timeout range", "  hooks:\n    - {event: Stop, command: x, timeout: 601}\n", "601 s is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := writeFiles(t, map[string]string{"agent.yaml": guardAgent + tc.extra, "s.md": "hi", "script.yaml": "turns:\n  - text: ok\n"})
			r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "-p", "hi")
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, filepath.Join(work, "agent.yaml")) {
				t.Fatalf("exit %d, stderr %q, want %q", r.code, r.stderr, tc.want)
			}
			// validate refuses it too.
			r = runHost(t, work, "", "validate", "--provider", "scripted", "--script", "script.yaml")
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("validate: exit %d, stderr %q, want %q", r.code, r.stderr, tc.want)
			}
		})
	}
}

// TestPermissionsCheck: the command names the deciding rule, its file and
// line and the argument matched; bad arguments and tools exit 2.
func TestPermissionsCheck(t *testing.T) {
	agent := guardAgent + "  permissions:\n    deny: [\"Shell(rm -rf *)\"]\n    allow: [\"Shell(git *)\"]\n"
	cfg := "permissions:\n  ask: [\"Shell(git push*)\"]\n"
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi", "config.yaml": cfg})
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"Shell", `{"command":"rm -rf /"}`}, 0, []string{"Shell: deny", `deny rule "Shell(rm -rf *)" (` + filepath.Join(work, "agent.yaml") + ":7)", `command = "rm -rf /"`, "with --yolo too"}},
		{[]string{"Shell", `{"command":"git push"}`}, 0, []string{"Shell: ask", filepath.Join(work, "config.yaml") + ":2"}},
		{[]string{"Shell", `{"command":"git log"}`}, 0, []string{"Shell: allow", "approved by the rule"}},
		{[]string{"Shell", `{"command":"make"}`}, 0, []string{"Shell: no rule", "the tool's own approval request decides"}},
		{[]string{"Shell", `{"command":`}, 2, []string{"not a JSON object"}},
		{[]string{"Bash", `{}`}, 2, []string{"unknown tool Bash"}},
	} {
		r := runHost(t, work, "", append([]string{"permissions", "check", "--config", "config.yaml"}, tc.args...)...)
		out := r.stdout + r.stderr
		if r.code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, r.code, tc.code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}

// TestSubagentUnderParentRules: a subagent's calls meet the parent's deny
// rules, and SubagentStart and SubagentStop hooks run around it.
func TestSubagentUnderParentRules(t *testing.T) {
	agent := strings.Replace(guardAgent, "name: t", "name: t\n  subagents:\n    helper: {path: ./sub.yaml, description: helps}", 1) +
		"  permissions:\n    deny: [\"Shell(rm *)\"]\n" +
		"  hooks:\n    - {event: SubagentStart, command: \"cat > start.json\"}\n    - {event: SubagentStop, matcher: helper, command: \"cat > stop.json\"}\n"
	sub := strings.Replace(guardAgent, "name: t", "name: sub", 1)
	script := `turns:
  - tool_calls: [{id: p1, name: Agent, arguments: {subagent: helper, prompt: "remove keep.txt"}}]
  - tool_calls: [{id: s1, name: Shell, arguments: {command: "rm keep.txt"}}]
  - text: sub done
  - text: parent done
`
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "sub.yaml": sub, "s.md": "hi", "script.yaml": script, "keep.txt": "x"})
	r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "-p", "Go.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !fileExists(filepath.Join(work, "keep.txt")) {
		t.Fatal("the subagent removed keep.txt")
	}
	for file, want := range map[string]string{"start.json": `"prompt":"remove keep.txt"`, "stop.json": `"response":"sub done"`} {
		data, err := os.ReadFile(filepath.Join(work, file))
		if err != nil || !strings.Contains(string(data), want) || !strings.Contains(string(data), `"agent_name":"helper"`) {
			t.Errorf("%s: %q (%v), want %s", file, data, err, want)
		}
	}
}

// TestSessionAndToolHooks: hooks from the configuration file and from
// agent.yaml both run; SessionStart, UserPromptSubmit, PostToolUse and
// SessionEnd get their fields; stream-json starts with the session event.
func TestSessionAndToolHooks(t *testing.T) {
	agent := guardAgent + `  hooks:
    - {event: SessionStart, command: "cat > start.json"}
    - {event: UserPromptSubmit, command: "cat > prompt.json"}
    - {event: PostToolUse, matcher: Shell, command: "cat > post.json"}
`
	cfg := "hooks:\n  - {event: SessionEnd, command: \"cat > end.json\"}\n"
	script := "turns:\n  - tool_calls: [{id: c1, name: Shell, arguments: {command: \"echo out-text\"}}]\n  - text: ok\n"
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi", "script.yaml": script, "config.yaml": cfg})
	r := runHost(t, work, "", "run", "--config", "config.yaml", "--provider", "scripted", "--script", "script.yaml", "--yolo",
		"--output-format", "stream-json", "-p", "Say it.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := streamEvents(t, r.stdout)
	if evs[0]["type"] != "session" || len(eventsOfType(evs, "hook")) < 3 {
		t.Fatalf("events %v", evs)
	}
	for file, want := range map[string]string{
		"start.json":  `"source":"startup"`,
		"prompt.json": `"prompt":"Say it."`,
		"post.json":   `out-text`,
		"end.json":    `"reason":"exit"`,
	} {
		data, err := os.ReadFile(filepath.Join(work, file))
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("%s: %q (%v), want %s", file, data, err, want)
		}
	}
}
