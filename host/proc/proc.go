// Package proc holds what the host does to the child processes it runs
// (plugins, MCP servers): a minimal environment, a process group of their
// own that dies with the host and is killed as a whole, a tag that finds
// everything they started (KillTagged), a start without the capabilities
// that read other processes (ExecUnprivileged, through the host's
// launcher), and the last lines of their stderr, to quote in errors.
package proc

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// BaseEnv lists the host variables every child inherits; a plugin's or an
// MCP server's own `env` adds to it. Nothing else reaches a child, API keys
// included.
var BaseEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// Command is exec.Command started through launcher when it is set:
// launcher[0] with launcher[1:], then path and args (kosong-host's
// `plugin-exec`, which drops DroppedCaps and execs path). A path that is
// the host's own executable (a built-in plugin) is run as Self: the binary
// running now, not a file put at its path since.
func Command(launcher []string, path string, args ...string) *exec.Cmd {
	path = execPath(path)
	if len(launcher) == 0 {
		return exec.Command(path, args...)
	}
	// A bare name is looked up in PATH as exec.Command does (a name not
	// found keeps exec.Command's error); a relative path stays relative to
	// the command's Dir.
	if filepath.Base(path) == path {
		lp, err := exec.LookPath(path)
		if err != nil {
			return exec.Command(path, args...)
		}
		path = lp
		if !strings.ContainsRune(path, filepath.Separator) {
			path = "." + string(filepath.Separator) + path
		}
	}
	return exec.Command(launcher[0], slices.Concat(launcher[1:], []string{path}, args)...)
}

// Env is the minimal environment: NAME=VALUE for each of BaseEnv and then
// extra, read with getenv, each name once, unset ones left out.
func Env(getenv func(string) string, extra ...string) []string {
	var env []string
	seen := map[string]bool{}
	for _, name := range append(append([]string(nil), BaseEnv...), extra...) {
		if seen[name] {
			continue
		}
		seen[name] = true
		if v := getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}
