package agent_test

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
)

// TestMCPToolListChanged: when an MCP server changes its tools while the
// agent runs, the toolset follows: new tools are offered and callable,
// removed ones are gone, the server's filters still apply, and a new tool
// whose name a plugin already has is left out while the plugin's stays.
func TestMCPToolListChanged(t *testing.T) {
	server := build(t, "host/testdata/mcpserver")
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	path := writeAgent(t, fmt.Sprintf("%q", echo))
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body = append(body, fmt.Sprintf("  mcp_servers:\n    test:\n      command: %q\n      disabled_tools: [hidden]\n    bare:\n      command: %q\n      prefix: false\n      enabled_tools: [retool, Echo, after]\n", server, server)...)
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	a := load(t, path, options(t, approval.Yolo{}))
	if !slices.Contains(a.Toolset.Names(), "test__add") {
		t.Fatalf("tools at load: %v", a.Toolset.Names())
	}

	if r := call(t, a, "test__retool", `{"add":"extra","remove":"add"}`); r.OutputText() != "done" {
		t.Fatalf("retool: %+v", r)
	}
	if r := call(t, a, "test__retool", `{"add":"hidden"}`); r.OutputText() != "done" {
		t.Fatalf("retool: %+v", r)
	}
	// The server notifies, and the client lists its tools again, on their
	// own time: wait for it, within a generous bound.
	waitFor(t, "test__extra in the toolset", func() bool {
		names := a.Toolset.Names()
		return slices.Contains(names, "test__extra") && !slices.Contains(names, "test__add")
	})
	if r := call(t, a, "test__extra", `{}`); r.OutputText() != "I am extra" {
		t.Fatalf("new tool: %+v", r)
	}
	if r := call(t, a, "test__add", `{"a":1,"b":2}`); r.Message != "Tool `test__add` not found" {
		t.Fatalf("removed tool: %+v", r)
	}
	var defs []string
	for _, d := range a.Toolset.Tools() {
		defs = append(defs, d.Name)
	}
	if !slices.Contains(defs, "test__extra") || slices.Contains(defs, "test__add") {
		t.Fatalf("tools offered to the model: %v", defs)
	}

	// A tool named like a plugin's is left out: the plugin's stays. Each
	// listing has every tool so far, so once "after" is in, Echo was seen.
	for _, add := range []string{"Echo", "after"} {
		if r := call(t, a, "retool", fmt.Sprintf(`{"add":%q}`, add)); r.OutputText() != "done" {
			t.Fatalf("retool on bare: %+v", r)
		}
	}
	waitFor(t, "after in the toolset", func() bool { return slices.Contains(a.Toolset.Names(), "after") })
	if r := call(t, a, "Echo", `{"text":"plugin"}`); r.OutputText() != "plugin" {
		t.Fatalf("the plugin's Echo: %+v", r)
	}
	// Once last is in, a listing with hidden (added before) was seen.
	if r := call(t, a, "test__retool", `{"add":"last"}`); r.OutputText() != "done" {
		t.Fatalf("retool: %+v", r)
	}
	waitFor(t, "test__last in the toolset", func() bool { return slices.Contains(a.Toolset.Names(), "test__last") })
	if slices.Contains(a.Toolset.Names(), "test__hidden") {
		t.Fatalf("a disabled tool was added: %v", a.Toolset.Names())
	}
}

// waitFor waits for cond, something other processes bring about, within a
// generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
