package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/spec"
)

func TestResolve(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	for _, p := range []string{filepath.Join(first, "kosong-plugin-echo"), filepath.Join(second, "kosong-plugin-echo"), filepath.Join(second, "kosong-plugin-only")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	builtins := map[string]agent.Builtin{
		"echo": {Path: "/opt/kosong-host", Args: []string{"plugin-serve", "echo"}},
		"web":  {Path: "/opt/kosong-host", Args: []string{"plugin-serve", "web"}},
	}
	bare := func(name string) spec.PluginRef { return spec.PluginRef{Name: name, Lookup: name} }
	tests := []struct {
		name     string
		ref      spec.PluginRef
		dirs     []string
		builtins map[string]agent.Builtin
		want     agent.Resolved
		source   string
		err      string
	}{
		{"an installed binary wins over the built-in", bare("echo"), []string{first}, builtins,
			agent.Resolved{Path: filepath.Join(first, "kosong-plugin-echo"), Overrides: true}, "plugin echo (" + filepath.Join(first, "kosong-plugin-echo") + ")", ""},
		{"the first plugin dir wins", bare("echo"), []string{second, first}, builtins,
			agent.Resolved{Path: filepath.Join(second, "kosong-plugin-echo"), Overrides: true}, "", ""},
		{"an installed binary without built-ins", bare("echo"), []string{first}, nil,
			agent.Resolved{Path: filepath.Join(first, "kosong-plugin-echo")}, "", ""},
		{"a name in no plugin dir is a built-in", bare("web"), []string{first, second}, builtins,
			agent.Resolved{Path: "/opt/kosong-host", Args: []string{"plugin-serve", "web"}, Builtin: true}, "builtin web", ""},
		{"built-ins without plugin dirs", bare("echo"), nil, builtins,
			agent.Resolved{Path: "/opt/kosong-host", Args: []string{"plugin-serve", "echo"}, Builtin: true}, "builtin echo", ""},
		{"a binary that is not a built-in", bare("only"), []string{first, second}, builtins,
			agent.Resolved{Path: filepath.Join(second, "kosong-plugin-only")}, "", ""},
		{"a path is never a built-in", spec.PluginRef{Name: "echo", Path: "/elsewhere/echo"}, nil, builtins,
			agent.Resolved{Path: "/elsewhere/echo"}, "plugin echo (/elsewhere/echo)", ""},
		{"neither installed nor built in", bare("ghost"), []string{first}, builtins, agent.Resolved{}, "",
			"plugin ghost: kosong-plugin-ghost not found in " + first + ", and it is not a built-in plugin (built-ins: echo, web)"},
		{"no built-ins", bare("echo"), nil, nil, agent.Resolved{}, "",
			"plugin echo: kosong-plugin-echo not found: no plugin directory is set (--plugin-dir, KOSONG_PLUGIN_PATH)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agent.Resolve(tt.ref, tt.dirs, tt.builtins)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Path != tt.want.Path || got.Builtin != tt.want.Builtin || fmt.Sprint(got.Args) != fmt.Sprint(tt.want.Args) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			if tt.source != "" && got.Source(tt.ref.Name) != tt.source {
				t.Fatalf("source %q, want %q", got.Source(tt.ref.Name), tt.source)
			}
		})
	}
}

// TestBuiltinLaunch: a built-in plugin goes through the launcher like a
// plugin binary (the echo binary stands in for the host binary here): its
// tools load with source "builtin NAME", its pin is the binary's hash, and
// an installed binary of the same name is launched instead.
func TestBuiltinLaunch(t *testing.T) {
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	sum, err := pins.FileSHA256(echo)
	if err != nil {
		t.Fatal(err)
	}
	builtins := map[string]agent.Builtin{"echo": {Path: echo}}

	opts := options(t, approval.Yolo{})
	opts.Builtins = builtins
	a := load(t, writeAgent(t, `"echo:Echo"`, "{plugin: echo, sha256: "+sum+"}"), opts)
	if st := a.Status[0]; st.Source != "builtin echo" || !st.Builtin || st.Path != echo || st.Status != "loaded" {
		t.Fatalf("status %+v", st)
	}
	if r := call(t, a, "Echo", `{"text":"built in"}`); r.OutputText() != "built in" {
		t.Fatalf("call: %+v", r)
	}
	if tool, _ := a.Toolset.Find("Echo"); tool.Spec().Source != "builtin echo" {
		t.Fatalf("toolset source %q", tool.Spec().Source)
	}

	_, err = agent.Load(t.Context(), writeAgent(t, "{plugin: echo, sha256: "+strings.Repeat("0", 64)+"}"), opts)
	if err == nil || !strings.Contains(err.Error(), "sha256 mismatch for "+echo) {
		t.Fatalf("wrong pin: %v", err)
	}

	dir := t.TempDir()
	installed := filepath.Join(dir, "kosong-plugin-echo")
	copyFile(t, echo, installed)
	opts.PluginDirs = []string{dir}
	a = load(t, writeAgent(t, `"echo:Echo"`), opts)
	if st := a.Status[0]; st.Source != "plugin echo ("+installed+")" || st.Builtin || st.Path != installed {
		t.Fatalf("installed binary: status %+v", st)
	}
}
