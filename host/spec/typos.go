package spec

import (
	"fmt"
	"slices"

	"github.com/kosong-host/kosong-host/host/suggest"
)

// checkTypos catches names that are a typo of a known one: an
// exclude_tools entry that matches nothing while a listed tool or plugin
// name is close to it (`exclude_tools: [Thnk]` next to `think:Think`), and
// an allowed_tools tool that the same plugin's `tools` entry does not list
// while it lists a close name. A name close to nothing keeps the documented
// rule: it may name a tool only the plugin knows, and is not an error.
func checkTypos(path string, tools, allowed []ToolRef, allowedSet bool, excludes []exclude) error {
	refs := tools
	if allowedSet {
		refs = allowed
	}
	// A bare entry names a tool: it is matched against tool names only
	// (`Shell` is no typo of the plugin `shell`); an entry naming a
	// plugin, against both.
	var known, knownTools []string
	add := func(list *[]string, names ...string) {
		for _, n := range names {
			if n != "" && !slices.Contains(*list, n) {
				*list = append(*list, n)
			}
		}
	}
	for _, r := range append(slices.Clone(tools), allowed...) {
		add(&known, r.Lookup)
		add(&known, r.Tools...)
		add(&knownTools, r.Tools...)
	}
	for i := range excludes {
		ex := &excludes[i]
		if excludeMatches(ex, refs) {
			continue
		}
		name := ex.tool
		if name == "" || (!ex.bare && ex.lookup != "" && !slices.Contains(known, ex.lookup)) {
			name = ex.lookup
		}
		candidates := known
		if ex.bare {
			candidates = knownTools
		}
		if s := suggest.Closest(name, candidates); s != "" && s != name {
			return &Error{File: path, Msg: fmt.Sprintf("exclude_tools entry %q matches no tool or plugin of the agent (did you mean %s?)", ex.text, s)}
		}
	}
	if !allowedSet {
		return nil
	}
	for _, a := range allowed {
		for _, t := range a.Tools {
			for _, r := range tools {
				if r.Lookup != a.Lookup || r.Path != a.Path || r.Tools == nil || slices.Contains(r.Tools, t) {
					continue
				}
				if s := suggest.Closest(t, r.Tools); s != "" {
					return &Error{File: path, Msg: fmt.Sprintf("allowed_tools entry %q: plugin %s has no tool %s in tools (did you mean %s?)", a.Text, r.Lookup, t, s)}
				}
			}
		}
	}
	return nil
}

// excludeMatches reports whether ex removes anything from refs, as far as
// the spec can tell (a tool of a plugin referenced whole may match too).
func excludeMatches(ex *exclude, refs []ToolRef) bool {
	for i := range refs {
		r := &refs[i]
		if ex.matchesPlugin(r) {
			return true
		}
		if ex.tool != "" && (ex.bare || ex.matchesPlugin(r)) && slices.Contains(r.Tools, ex.tool) {
			return true
		}
	}
	return false
}
