package agent

import (
	"fmt"
	"strings"

	"github.com/kosong-host/kosong-host/host/spec"
)

// Override is a built-in plugin replaced by an installed binary.
type Override struct {
	// Name is the plugin's name in the agent file; Path the binary found
	// for it.
	Name string `json:"name"`
	Path string `json:"path"`
}

// overridden lists the plugins refs name by the bare name of a built-in
// that resolve to an installed binary no pin names: anyone who can put a
// kosong-plugin-NAME in a plugin dir replaces the built-in. (refs carry
// the lock file's pins once pluginSpecs has applied them.)
func overridden(refs []spec.PluginRef, opts Options) []Override {
	var out []Override
	for _, ref := range refs {
		if ref.Remote != nil || ref.SHA256 != "" {
			continue
		}
		if res, err := Resolve(ref, opts.PluginDirs, opts.Builtins); err == nil && res.Overrides {
			out = append(out, Override{Name: ref.Name, Path: res.Path})
		}
	}
	return out
}

// OverrideNotice is the one line that says which built-in plugins
// installed binaries replace without a pin; "" when none does.
func OverrideNotice(list []Override) string {
	if len(list) == 0 {
		return ""
	}
	parts := make([]string, len(list))
	for i, o := range list {
		parts[i] = fmt.Sprintf("%s by %s", o.Name, o.Path)
	}
	if len(list) == 1 {
		return "built-in plugin replaced by an installed binary that no pin names: " + parts[0] +
			" (pin it with `kosong-host plugins lock`, or remove it to use the built-in)"
	}
	return "built-in plugins replaced by installed binaries that no pin names: " + strings.Join(parts, ", ") +
		" (pin them with `kosong-host plugins lock`, or remove them to use the built-ins)"
}
