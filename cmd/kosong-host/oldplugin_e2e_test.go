package main_test

import (
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestPluginThatCannotDeclareItsTools: a plugin built against an earlier SDK
// (an old-style `jsonschema:"description=..."` tag, Serve called as a
// statement) fails to start with its reason quoted, not as "not a kosong
// plugin".
func TestPluginThatCannotDeclareItsTools(t *testing.T) {
	old, err := testbin.Build("host/testdata/plugins/oldtag", "oldtag")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{"agent.yaml": strings.Replace(echoAgent, "echo:Echo", old+":Greet", 1), "s.md": ""})
	want := "plugin oldtag: " + old + " is a kosong plugin that failed to declare its tools: tool Greet: parameters type main.greetParams: " +
		`tag must not begin with 'WORD=': "description=Who to greet."`
	r := runHost(t, dir, "", "--agent", "agent.yaml", "tools", "list")
	if r.code != 2 || !strings.HasPrefix(r.stderr, "error: ") || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d stderr %q, want exit 2 and %q", r.code, r.stderr, want)
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || strings.Contains(r.stderr, "not a kosong plugin") {
		t.Fatalf("stderr %q is not the one line with the reason", r.stderr)
	}
}
