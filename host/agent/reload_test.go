package agent_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
)

func rewrite(t *testing.T, path string, tools ...string) {
	t.Helper()
	body := "version: 1\nagent:\n  name: test\n  system_prompt_path: ./system.md\n  tools:\n"
	for _, tl := range tools {
		body += "    - " + tl + "\n"
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReload: a reload keeps unchanged plugins running (same process),
// stops removed ones and starts new ones; the toolset changes only when
// the staged swap is applied. Broken edits (a syntax error, a missing
// plugin, a Check error) are refused and leave the toolset alone.
func TestReload(t *testing.T) {
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	cc := build(t, "host/testdata/plugins/capcheck")
	echoRef, ccRef := fmt.Sprintf("%q", echo+":Echo"), fmt.Sprintf(`{plugin: %q, tools: [Whoami]}`, cc)
	path := writeAgent(t, echoRef)
	a := load(t, path, options(t, approval.Yolo{}))
	pid := a.Plugins[0].Current().Pid()

	// Refused edits.
	for _, tc := range []struct {
		name  string
		edit  func()
		check func(*spec.Spec, []toolset.Spec) (func(), error)
		want  string
	}{
		{"syntax error", func() { os.WriteFile(path, []byte("version: 1\nagent: [oops\n"), 0o644) }, nil, "Invalid YAML in agent spec file"},
		{"missing plugin", func() { rewrite(t, path, echoRef, `"./no-such-plugin:Tool"`) }, nil, "no-such-plugin"},
		{"check error", func() { rewrite(t, path, echoRef, ccRef) },
			func(*spec.Spec, []toolset.Spec) (func(), error) { return nil, fmt.Errorf("rules say no") }, "rules say no"},
	} {
		tc.edit()
		_, err := a.Reload(context.Background(), agent.ReloadOptions{Check: tc.check})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		a.ApplyPending()
		if got := a.Toolset.Names(); !slices.Equal(got, []string{"Echo"}) {
			t.Fatalf("%s: tools %v after a refused reload", tc.name, got)
		}
	}

	// Add capcheck: echo kept, capcheck started, swapped only when applied.
	rewrite(t, path, echoRef, ccRef)
	applied := false
	res, err := a.Reload(context.Background(), agent.ReloadOptions{Check: func(*spec.Spec, []toolset.Spec) (func(), error) {
		return func() { applied = true }, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Kept, []string{"echo"}) || !slices.Equal(res.Started, []string{"capcheck"}) || !slices.Equal(res.Tools, []string{"Echo", "Whoami"}) {
		t.Fatalf("reload %+v", res)
	}
	if _, ok := a.Toolset.Find("Whoami"); ok || applied {
		t.Fatal("the toolset changed before the swap was applied")
	}
	a.ApplyPending()
	if r := call(t, a, "Whoami", `{}`); r.IsError() || !applied {
		t.Fatalf("Whoami after reload: %+v (applied %v)", r, applied)
	}
	for _, p := range a.Plugins {
		if p.Name() == "echo" && p.Current().Pid() != pid {
			t.Fatal("the unchanged echo plugin was restarted")
		}
	}

	// Remove echo.
	rewrite(t, path, ccRef)
	res, err = a.Reload(context.Background(), agent.ReloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.ApplyPending()
	if !slices.Equal(res.Stopped, []string{"echo"}) || !slices.Equal(a.Toolset.Names(), []string{"Whoami"}) {
		t.Fatalf("reload %+v, tools %v", res, a.Toolset.Names())
	}
	if r := call(t, a, "Echo", `{"text":"x"}`); !r.IsError() {
		t.Fatalf("Echo still runs: %+v", r)
	}
}
