package plugin

import (
	"slices"
	"testing"

	"github.com/kosong-host/kosong-host/host/sandbox"
)

// TestCommandExecs: a plugin start is one exec where the host has already
// taken the dropped capabilities out of every child (direct): the plugin
// itself, or a sandboxed built-in given its rules. Otherwise the launcher
// (which drops them, and applies a sandbox) comes first, as does the
// sandbox wrapper for a sandboxed plugin that is not a built-in.
func TestCommandExecs(t *testing.T) {
	policy := &sandbox.Policy{Plugin: "shell", Read: []string{"/"}, Write: []string{"/work"}}
	rules := policy.Marshal()
	launcher := []string{"/host", "plugin-exec"}
	tests := []struct {
		name    string
		direct  bool
		cfg     Config
		want    []string
		wantErr bool
	}{
		{"plugin, direct", true, Config{Path: "/p/echo", Args: []string{"-v"}, Launcher: launcher}, []string{"/p/echo", "-v"}, false},
		{"plugin, launcher needed", false, Config{Path: "/p/echo", Launcher: launcher}, []string{"/host", "plugin-exec", "/p/echo"}, false},
		{"no launcher", true, Config{Path: "/p/echo"}, []string{"/p/echo"}, false},
		{"sandboxed built-in, direct", true, Config{Path: "/host", Args: []string{"plugin-serve", "shell"}, Builtin: true, Launcher: launcher, Sandbox: policy},
			[]string{"/host", "plugin-serve", sandbox.LauncherFlag, rules, "shell"}, false},
		{"sandboxed built-in, launcher needed", false, Config{Path: "/host", Args: []string{"plugin-serve", "shell"}, Builtin: true, Launcher: launcher, Sandbox: policy},
			[]string{"/host", "plugin-exec", sandbox.LauncherFlag, rules, "/host", "plugin-serve", "shell"}, false},
		{"sandboxed plugin, direct", true, Config{Path: "/p/echo", Launcher: launcher, Sandbox: policy},
			[]string{"/host", "plugin-exec", sandbox.LauncherFlag, rules, "/p/echo"}, false},
		{"sandboxed plugin, no launcher", true, Config{Path: "/p/echo", Sandbox: policy, SandboxExec: "/host"},
			[]string{"/host", sandbox.ExecCommand, "--rules", rules, "--", "/p/echo"}, false},
		{"sandboxed plugin, no wrapper", true, Config{Path: "/p/echo", Sandbox: policy}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := directStart
			directStart = func() bool { return tc.direct }
			t.Cleanup(func() { directStart = old })
			cmd, err := tc.cfg.command()
			if tc.wantErr {
				if err == nil {
					t.Fatalf("command: %v, want an error", cmd.Args)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := append([]string{cmd.Path}, cmd.Args[1:]...)
			if !slices.Equal(got, tc.want) {
				t.Errorf("command:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestBuiltinGCEnv: a built-in's collector is off during package
// initialisation, then runs at the host's GOGC (a percentage; else 100),
// under the host's GOMEMLIMIT when it has one.
func TestBuiltinGCEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want []string
	}{
		{nil, []string{"GOGC=off", "KOSONG_PLUGIN_GOGC=100"}},
		{map[string]string{"GOGC": "50"}, []string{"GOGC=off", "KOSONG_PLUGIN_GOGC=50"}},
		{map[string]string{"GOGC": "off"}, []string{"GOGC=off", "KOSONG_PLUGIN_GOGC=100"}},
		{map[string]string{"GOGC": "-1", "GOMEMLIMIT": "256MiB"}, []string{"GOGC=off", "KOSONG_PLUGIN_GOGC=100", "GOMEMLIMIT=256MiB"}},
	}
	for _, tc := range tests {
		if got := builtinGCEnv(func(k string) string { return tc.env[k] }); !slices.Equal(got, tc.want) {
			t.Errorf("env %v: %q, want %q", tc.env, got, tc.want)
		}
	}
}
