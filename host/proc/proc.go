// Package proc holds what the host does to the child processes it runs
// (plugins, MCP servers): a minimal environment, a process group of their
// own that dies with the host and is killed as a whole, and the last lines
// of their stderr, to quote in errors.
package proc

// BaseEnv lists the host variables every child inherits; a plugin's or an
// MCP server's own `env` adds to it. Nothing else reaches a child, API keys
// included.
var BaseEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

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
