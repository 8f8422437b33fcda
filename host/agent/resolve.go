package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kosong-host/kosong-host/host/spec"
)

// Builtin says how to launch a plugin that the host binary serves itself,
// in a child process of its own, through the same launcher as a plugin
// binary. A pin of a built-in plugin is the hash of that binary.
type Builtin struct {
	// Path is the binary to run: the host's own executable.
	Path string
	// Args make the binary serve the plugin (e.g. plugin-serve NAME).
	Args []string
}

// Resolved is where a plugin reference leads: a plugin binary, or a plugin
// built into the host binary.
type Resolved struct {
	// Path is the binary to launch (the host's own for a built-in).
	Path string
	// Args are its arguments; nil for a plugin binary.
	Args []string
	// Builtin is true for a plugin the host binary serves.
	Builtin bool
	// Overrides is true for an installed binary (kosong-plugin-NAME in
	// the plugin dirs) found for the bare name of a built-in plugin,
	// which it replaces.
	Overrides bool
}

// Source names where a plugin's tools come from: "plugin NAME (PATH)" or
// "builtin NAME".
func (r Resolved) Source(name string) string {
	if r.Builtin {
		return "builtin " + name
	}
	return fmt.Sprintf("plugin %s (%s)", name, r.Path)
}

// SourceResolver finds (installing it when it is missing) the binary of a
// plugin with an OCI source (ref.Source); the command line sets it (see
// host/distribution). Nil: such a plugin does not resolve.
var SourceResolver func(ref spec.PluginRef) (string, error)

// Resolve finds a plugin: a plugin with a source through SourceResolver;
// a path as given; a bare name as
// kosong-plugin-NAME in the plugin dirs, in order, and then among the
// built-in plugins, so that an installed binary overrides a built-in.
func Resolve(ref spec.PluginRef, dirs []string, builtins map[string]Builtin) (Resolved, error) {
	if ref.Source != "" {
		if SourceResolver == nil {
			return Resolved{}, fmt.Errorf("plugin %s: source %s: this program does not install plugins", ref.Name, ref.Source)
		}
		path, err := SourceResolver(ref)
		return Resolved{Path: path}, err
	}
	path, err := ResolvePlugin(ref, dirs)
	if err == nil {
		_, overrides := builtins[ref.Lookup]
		return Resolved{Path: path, Overrides: overrides && ref.Path == ""}, nil
	}
	if ref.Path != "" || len(builtins) == 0 {
		return Resolved{}, err
	}
	if b, ok := builtins[ref.Lookup]; ok {
		return Resolved{Path: b.Path, Args: slices.Clone(b.Args), Builtin: true}, nil
	}
	names := make([]string, 0, len(builtins))
	for name := range builtins {
		names = append(names, name)
	}
	slices.Sort(names)
	return Resolved{}, fmt.Errorf("%w, and it is not a built-in plugin (built-ins: %s)", err, strings.Join(names, ", "))
}
