package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shellScript is a scripted-provider script whose first turn calls Shell
// once per command (ids c1, c2...).
func shellScript(t *testing.T, commands ...string) string {
	t.Helper()
	var calls []map[string]any
	for i, c := range commands {
		calls = append(calls, map[string]any{"id": "c" + string(rune('1'+i)), "name": "Shell", "arguments": map[string]string{"command": c}})
	}
	b, err := json.Marshal(map[string]any{"turns": []any{map[string]any{"tool_calls": calls}, map[string]any{"text": "ok"}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAllowRulesSeeNestedCommands: under allow rules Shell(ls *) and
// Shell(git status*), a one-shot run without --yolo refuses commands
// hidden in $( ) and <( ) and a redirection to a file: no marker file is
// created and F keeps its content (exit 3: calls were refused); a plain
// allowed command runs.
func TestAllowRulesSeeNestedCommands(t *testing.T) {
	agent := guardAgent + "  permissions:\n    allow: [\"Shell(ls *)\", \"Shell(git status*)\", \"Shell(echo *)\"]\n"
	script := shellScript(t, `ls "$(touch X1)"`, "git status <(touch X2)", "git status > F", "echo ran > /dev/null && echo ran")
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi", "script.yaml": script, "F": "keep"})
	r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--output-format", "stream-json", "-p", "Look.")
	if r.code != 3 { // calls were refused
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, marker := range []string{"X1", "X2"} {
		if fileExists(filepath.Join(work, marker)) {
			t.Errorf("%s was created: a nested command ran", marker)
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, "F")); err != nil || string(b) != "keep" {
		t.Errorf("F = %q (%v): the redirection ran", b, err)
	}
	evs := streamEvents(t, r.stdout)
	status := map[string]any{}
	for _, res := range eventsOfType(evs, "tool_result") {
		status[res["id"].(string)] = res["status"]
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		if status[id] != "rejected" {
			t.Errorf("%s: status %v, want rejected (all: %v)", id, status[id], status)
		}
	}
	if status["c4"] != "ok" {
		t.Errorf("c4 (allowed): status %v, want it run\n%s", status["c4"], r.stdout)
	}
	for _, a := range eventsOfType(evs, "approval") {
		if a["answer"] == "rule" && a["tool_call_id"] != "c4" {
			t.Errorf("approval by rule for %v", a)
		}
	}
}

// TestDenyRuleResolvesUnderYolo: deny Shell(rm *) stops rm however it is
// written (absolute path, backslash, command, sh -c, a dynamic name) under
// --yolo; the files survive, and a command no rule denies runs.
func TestDenyRuleResolvesUnderYolo(t *testing.T) {
	rm, err := exec.LookPath("rm")
	if err != nil {
		t.Skip("no rm:", err)
	}
	agent := guardAgent + "  permissions:\n    deny: [\"Shell(rm *)\"]\n"
	script := shellScript(t, rm+" -f k1", `\rm -f k2`, "command rm -f k3", `sh -c "rm -f k4"`, `X=rm; $X -f k5`, "touch made")
	files := map[string]string{"agent.yaml": agent, "s.md": "hi", "script.yaml": script}
	for _, k := range []string{"k1", "k2", "k3", "k4", "k5"} {
		files[k] = "x"
	}
	work := writeFiles(t, files)
	r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo", "--output-format", "stream-json", "-p", "Clean up.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, k := range []string{"k1", "k2", "k3", "k4", "k5"} {
		if !fileExists(filepath.Join(work, k)) {
			t.Errorf("%s was removed", k)
		}
	}
	if !fileExists(filepath.Join(work, "made")) {
		t.Errorf("touch made did not run: the run refused everything\n%s", r.stdout)
	}
	evs := streamEvents(t, r.stdout)
	denied := map[string]bool{}
	for _, p := range eventsOfType(evs, "permission") {
		if p["decision"] == "deny" && p["rule"] == "Shell(rm *)" {
			denied[p["tool_call_id"].(string)] = true
		}
	}
	for _, id := range []string{"c1", "c2", "c3", "c4", "c5"} {
		if !denied[id] {
			t.Errorf("%s: no deny permission event (%v)", id, eventsOfType(evs, "permission"))
		}
	}
	for _, res := range eventsOfType(evs, "tool_result") {
		if res["id"] == "c5" && !strings.Contains(res["message"].(string), "cannot be checked") {
			t.Errorf("c5: the model sees %q", res["message"])
		}
	}
}

// TestPermissionsCheckExplainsShell: permissions check names the simple
// command and the rule that decided, or why a command is not allowed.
func TestPermissionsCheckExplainsShell(t *testing.T) {
	agent := guardAgent + "  permissions:\n    deny: [\"Shell(rm *)\"]\n    allow: [\"Shell(ls *)\", \"Shell(git status*)\"]\n"
	work := writeFiles(t, map[string]string{"agent.yaml": agent, "s.md": "hi"})
	for _, tc := range []struct {
		command string
		want    []string
	}{
		{`ls "$(touch X)"`, []string{"Shell: no rule", "not allowed by rules: `touch X` (in $( )): no allow rule matches",
			`ls "$(touch X)": allowed by Shell(ls *)`, "touch X (in $( )): no allow rule matches", "-p without --yolo rejects it"}},
		{"git status > F", []string{"Shell: no rule", "git status > F: redirection to a file: > F"}},
		{"git status 2>&1 && ls", []string{"Shell: allow", "git status: allowed by Shell(git status*)", "ls: allowed by Shell(ls *)"}},
		{"/bin/rm -f x", []string{"Shell: deny", "matches `rm -f x`, written `/bin/rm -f x`", "with --yolo too"}},
		{"$X args", []string{"Shell: deny", `cannot check the command against deny rule "Shell(rm *)"`, "dynamic command name: $X args"}},
	} {
		args, _ := json.Marshal(map[string]string{"command": tc.command})
		r := runHost(t, work, "", "permissions", "check", "Shell", string(args))
		if r.code != 0 {
			t.Errorf("%q: exit %d\n%s%s", tc.command, r.code, r.stdout, r.stderr)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%q: output lacks %q:\n%s", tc.command, w, r.stdout)
			}
		}
	}
}
