package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/toolset"
)

// TestAnnotationsInToolsDescribeAndList: the annotations a plugin (Echo:
// read-only, closed-world; Shell: destructive, open-world) and an MCP
// server (test__echo's readOnlyHint and openWorldHint) declare show in
// tools describe and tools list; a tool declaring none (test__add) shows
// none.
func TestAnnotationsInToolsDescribeAndList(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": mcpAgent(t), "s.md": "hi"})
	for tool, want := range map[string]string{
		"Echo":       "Annotations:  read-only, closed-world\n",
		"Shell":      "Annotations:  destructive, open-world\n",
		"test__echo": "Annotations:  read-only, closed-world\n",
		"test__add":  "Annotations:  none declared\n",
	} {
		r := runHost(t, dir, "", "tools", "describe", tool)
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("tools describe %s lacks %q: exit %d\n%s%s", tool, want, r.code, r.stdout, r.stderr)
		}
	}

	r := runHost(t, dir, "", "tools", "list", "--json")
	if r.code != 0 {
		t.Fatalf("tools list: exit %d: %s", r.code, r.stderr)
	}
	var rows []struct {
		Name        string
		Annotations *toolset.Annotations
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	got := map[string]string{}
	for _, row := range rows {
		b, _ := json.Marshal(row.Annotations)
		got[row.Name] = string(b)
	}
	want := map[string]string{
		"Echo":       `{"read_only":true,"destructive":false,"open_world":false}`,
		"Shell":      `{"read_only":false,"destructive":true,"open_world":true}`,
		"test__echo": `{"read_only":true,"open_world":false}`,
		"test__add":  `null`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("tools list --json %s: annotations %s, want %s", name, got[name], w)
		}
	}

	r = runHost(t, dir, "", "tools", "list")
	for name, w := range map[string]string{"test__echo": "read-only, closed-world", "Shell": "destructive, open-world", "test__add": " - "} {
		if !hasRow(r.stdout, name, w) {
			t.Errorf("tools list: no row %s with %q:\n%s", name, w, r.stdout)
		}
	}
}

// TestMCPServeExportsAnnotations: an MCP client of `mcp serve` sees the
// annotations of plugin tools and of the agent's MCP tools as hints
// (readOnlyHint, destructiveHint, idempotentHint, openWorldHint), and none
// on a tool declaring none.
func TestMCPServeExportsAnnotations(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": mcpAgent(t), "s.md": "hi"})
	cs := serveMCP(t, dir, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range res.Tools {
		if tl.Annotations == nil {
			got[tl.Name] = "none"
			continue
		}
		a := tl.Annotations
		hint := func(b *bool) string {
			if b == nil {
				return "?"
			}
			return fmt.Sprint(*b)
		}
		got[tl.Name] = fmt.Sprintf("readOnly=%v destructive=%s idempotent=%v openWorld=%s",
			a.ReadOnlyHint, hint(a.DestructiveHint), a.IdempotentHint, hint(a.OpenWorldHint))
	}
	want := map[string]string{
		"Echo":       "readOnly=true destructive=false idempotent=false openWorld=false",
		"Shell":      "readOnly=false destructive=true idempotent=false openWorld=true",
		"test__echo": "readOnly=true destructive=? idempotent=false openWorld=false",
		"test__add":  "none",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, want %s", name, got[name], w)
		}
	}
}

// TestFirstPartyAnnotations: the built-in tools declare what
// docs/plugins.md says they do (SearchWeb and AskUserQuestion are skipped
// here: no search service, no one to answer).
func TestFirstPartyAnnotations(t *testing.T) {
	want := map[string]string{
		"Echo": "read-only, closed-world", "Think": "read-only, closed-world", "SetTodoList": "read-only, closed-world",
		"ReadFile": "read-only, closed-world", "Glob": "read-only, closed-world", "Grep": "read-only, closed-world",
		"ReadMediaFile": "read-only, closed-world", "TaskList": "read-only, closed-world", "TaskOutput": "read-only, closed-world",
		"FetchURL":  "read-only, open-world",
		"WriteFile": "destructive, closed-world", "StrReplaceFile": "destructive, closed-world",
		"TaskStop": "destructive, idempotent, closed-world",
		"Shell":    "destructive, open-world",
	}
	plugins := map[string]string{"Echo": "echo", "Think": "think", "SetTodoList": "todo", "ReadFile": "file", "Glob": "file",
		"Grep": "file", "ReadMediaFile": "media", "TaskList": "shell", "TaskOutput": "shell", "FetchURL": "web",
		"WriteFile": "file", "StrReplaceFile": "file", "TaskStop": "shell", "Shell": "shell"}
	var tools []string
	for tool, plugin := range plugins {
		tools = append(tools, fmt.Sprintf("%q", plugin+":"+tool))
	}
	agentYAML := "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [" + strings.Join(tools, ", ") + "]\n"
	dir := writeFiles(t, map[string]string{"agent.yaml": agentYAML, "s.md": "hi"})
	r := runHost(t, dir, "", "tools", "list")
	if r.code != 0 {
		t.Fatalf("tools list: exit %d: %s", r.code, r.stderr)
	}
	for tool, w := range want {
		if !hasRow(r.stdout, tool, "  "+w+"  ") {
			t.Errorf("tools list: no row %s with %q:\n%s", tool, w, r.stdout)
		}
	}
}
