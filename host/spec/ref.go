package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// PluginPrefix is the prefix of the executable a bare plugin name is looked up as:
// plugin "echo" is the program "kosong-plugin-echo". The lookup itself is not done here.
const PluginPrefix = "kosong-plugin-"

// ToolRef is one entry of `tools` or `allowed_tools`: some or all tools of one plugin.
//
// It is written either as a string, `PLUGIN:Tool` (one tool) or `PLUGIN` (every tool of the
// plugin), or as a mapping with the plugin's settings:
//
//	tools:
//	  - echo:Echo                     # one tool of plugin "echo"
//	  - ./bin/files                   # every tool of the plugin at ./bin/files
//	  - plugin: ./bin/search          # required
//	    tools: [SearchWeb, FetchURL]  # optional; absent = every tool
//	    sha256: 3f7a...               # optional; pins the plugin binary (64 hex digits)
//	    config: {engine: brave}       # optional; any mapping, handed to the tools as JSON
//	    timeout: 30s                  # optional; Go duration > 0
//	    env: [BRAVE_API_KEY]          # optional; host environment variables the plugin may inherit
//	  - plugin: greet                 # a bare name ...
//	    source: oci://ghcr.io/team/greet   # ... installed from an OCI registry (tag, @sha256:...)
//	    version: "~> 1.2"             # optional; a semver constraint on the source's tags
//
// PLUGIN is a path if it contains a slash (relative to the folder of the file that declares
// the reference), else a plugin name, looked up later as PluginPrefix+NAME.
type ToolRef struct {
	// Text is the reference as written for a string entry; for a mapping entry,
	// "PLUGIN" or "PLUGIN:Tool1,Tool2". For messages.
	Text string
	// Plugin is the plugin part as written ("echo", "./bin/x").
	Plugin string
	// Path is the absolute path of the plugin if Plugin is a path, else "".
	Path string
	// Lookup is the plugin name if Plugin is a bare name, else "".
	Lookup string
	// Tools are the tools wanted, in order, without duplicates; nil means every tool of
	// the plugin (never an empty non-nil list).
	Tools []string
	// Exclude lists tools exclude_tools removed from a reference whose Tools is nil
	// (every tool but these). Nil when Tools is not nil.
	Exclude []string
	// SHA256 pins the plugin binary: lowercase hex, "" = not pinned.
	SHA256 string
	// Config is handed to every tool of this reference, as a JSON object; nil = none.
	Config json.RawMessage
	// Timeout bounds each call to a tool of this reference; 0 = the host's default.
	Timeout time.Duration
	// Env lists the host environment variables the plugin may inherit, sorted, unique.
	Env []string
	// AllowSecrets lets Env name a provider key variable (SecretEnv).
	AllowSecrets bool
	// Sandbox confines the plugin (`sandbox`, see Sandbox); nil = the agent's.
	Sandbox *Sandbox
	// Remote is set for a remote tool server (then Plugin, Path and Lookup are "").
	Remote *RemoteRef
	// Source is where a plugin named by Lookup is installed from
	// (`source: oci://REGISTRY/REPO[:TAG|@sha256:...]`), "" = the plugin
	// dirs and built-ins; Version is a semver constraint on its tags.
	Source, Version string
	// File and Line locate the reference (File absolute).
	File string
	Line int
}

// Name is the plugin's display name: the bare name, or the base name of its path.
func (r *ToolRef) Name() string {
	if r.Remote != nil {
		return r.Remote.Name
	}
	if r.Lookup != "" {
		return r.Lookup
	}
	return filepath.Base(r.Path)
}

// Where is "FILE:LINE" of the reference, for messages.
func (r *ToolRef) Where() string {
	return fmt.Sprintf("%s:%d", r.File, r.Line)
}

func (r ToolRef) clone() ToolRef {
	r.Tools = slices.Clone(r.Tools)
	r.Exclude = slices.Clone(r.Exclude)
	r.Env = slices.Clone(r.Env)
	return r
}

var (
	// toolNameRE is what model providers accept as a function name.
	toolNameRE   = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	pluginNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sha256RE     = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
)

// splitRef splits "PLUGIN:Tool" at the last colon. A colon followed by a path separator
// belongs to the plugin path.
func splitRef(s string) (plugin, tool string, hasTool bool) {
	if i := strings.LastIndex(s, ":"); i >= 0 && !isPath(s[i+1:]) {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

func isPath(s string) bool {
	return strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator)
}

// setPlugin fills Plugin, Path and Lookup of r from the plugin text.
func (p *parser) setPlugin(r *ToolRef, n *yaml.Node, plugin, what string) error {
	r.Plugin = plugin
	switch {
	case plugin == "":
		return p.errf(n, "%s %q: empty plugin", what, r.Text)
	case isPath(plugin):
		r.Path = p.f.abs(plugin)
	case pluginNameRE.MatchString(plugin):
		r.Lookup = plugin
	default:
		return p.errf(n, "%s %q: invalid plugin name %q (want letters, digits, '.', '_', '-', or a path containing '/')", what, r.Text, plugin)
	}
	return nil
}

func (p *parser) checkTool(n *yaml.Node, tool, what, text string) error {
	if !toolNameRE.MatchString(tool) {
		return p.errf(n, "%s %q: invalid tool name %q (want 1-64 letters, digits, '_' or '-')", what, text, tool)
	}
	return nil
}

// toolRefs parses a `tools` or `allowed_tools` list; null is an empty list.
func (p *parser) toolRefs(n *yaml.Node, what string) ([]ToolRef, error) {
	out := []ToolRef{}
	if isNull(n) {
		return out, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "%s must be a list, got %s", what, kindName(n))
	}
	for _, e := range n.Content {
		e = deref(e)
		var (
			r   ToolRef
			err error
		)
		switch {
		case e.Kind == yaml.MappingNode:
			r, err = p.toolRefMapping(e, what)
		case e.Kind == yaml.ScalarNode && !isNull(e):
			r, err = p.toolRefString(e, what)
		default:
			err = p.errf(e, "%s entry must be a string or a mapping, got %s", what, kindName(e))
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (p *parser) toolRefString(n *yaml.Node, what string) (ToolRef, error) {
	r := ToolRef{Text: n.Value, File: p.f.path, Line: n.Line}
	plugin, tool, hasTool := splitRef(n.Value)
	if err := p.setPlugin(&r, n, plugin, what+" entry"); err != nil {
		return r, err
	}
	if hasTool {
		if err := p.checkTool(n, tool, what+" entry", r.Text); err != nil {
			return r, err
		}
		r.Tools = []string{tool}
	}
	return r, nil
}

func (p *parser) toolRefMapping(n *yaml.Node, what string) (ToolRef, error) {
	r := ToolRef{File: p.f.path, Line: n.Line}
	var pluginNode, toolsNode, envNode, sourceNode, versionNode *yaml.Node
	where := what + " entry"
	err := p.mapping(n, where, func(k, v *yaml.Node) error {
		switch k.Value {
		case "allow_secrets":
			b, err := p.boolean(v, where+": allow_secrets")
			r.AllowSecrets = b
			return err
		case "remote", "name", "tls":
			return p.remoteKey(&r, k, v, where)
		case "plugin":
			s, err := p.str(v, where+": plugin")
			r.Plugin, pluginNode = s, v
			return err
		case "tools":
			toolsNode = v
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "%s: tools must be a list of tool names, got %s (omit it for every tool)", where, kindName(v))
			}
			if len(v.Content) == 0 {
				return p.errf(v, "%s: tools must not be empty (omit it for every tool)", where)
			}
			names, err := p.stringList(v, where+": tools")
			r.Tools = names
			return err
		case "sha256":
			s, err := p.str(v, where+": sha256")
			if err != nil {
				return err
			}
			if !sha256RE.MatchString(s) {
				return p.errf(v, "%s: invalid sha256 %q (want 64 hex digits)", where, s)
			}
			r.SHA256 = strings.ToLower(s)
			return nil
		case "config":
			if isNull(v) {
				return nil
			}
			if v.Kind != yaml.MappingNode {
				return p.errf(v, "%s: config must be a mapping, got %s", where, kindName(v))
			}
			raw, err := yamlToJSON(v)
			if err != nil {
				return p.errf(v, "%s: config: %v", where, err)
			}
			r.Config = raw
			return nil
		case "timeout":
			s, err := p.str(v, where+": timeout")
			if err != nil {
				return err
			}
			d, perr := time.ParseDuration(s)
			if perr != nil || d <= 0 {
				return p.errf(v, "%s: invalid timeout %q (want a positive duration like \"30s\")", where, s)
			}
			r.Timeout = d
			return nil
		case "env":
			envNode = v
			names, err := p.stringList(v, where+": env")
			if err != nil {
				return err
			}
			for _, name := range names {
				if !envNameRE.MatchString(name) {
					return p.errf(v, "%s: invalid environment variable name %q", where, name)
				}
			}
			r.Env = sortedUnique(names)
			return nil
		case "sandbox":
			sb, err := p.sandbox(v, where)
			r.Sandbox = sb
			return err
		case "source":
			s, err := p.str(v, where+": source")
			r.Source, sourceNode = s, v
			return err
		case "version":
			s, err := p.str(v, where+": version")
			r.Version, versionNode = s, v
			return err
		default:
			if len(n.Content) == 2 && v.Kind == yaml.ScalarNode {
				return p.errf(k, "unknown key %q in %s (known keys: %s; for one tool write \"%s:%s\" without a space)",
					k.Value, where, strings.Join(toolRefKeys, ", "), k.Value, v.Value)
			}
			return p.unknownKey(k, where, toolRefKeys)
		}
	})
	if err != nil {
		return r, err
	}
	if r.Remote != nil {
		return p.finishRemote(&r, n, pluginNode, toolsNode, where)
	}
	if pluginNode == nil {
		return r, p.errf(n, "%s: plugin or remote is required", where)
	}
	r.Text = r.Plugin
	if r.Tools != nil {
		r.Text += ":" + strings.Join(r.Tools, ",")
	}
	if err := p.setPlugin(&r, pluginNode, r.Plugin, where); err != nil {
		return r, err
	}
	if err := p.checkSource(&r, n, sourceNode, versionNode, where); err != nil {
		return r, err
	}
	if name := r.secretEnv(nil); name != "" {
		return r, p.errf(envNode, "%s: %s", where, pluginSecretMsg(r.Name(), name))
	}
	if r.Tools != nil {
		for _, t := range r.Tools {
			if err := p.checkTool(toolsNode, t, where, r.Text); err != nil {
				return r, err
			}
		}
		r.Tools = unique(r.Tools)
	}
	return r, nil
}

// unique removes repeated entries, keeping the first.
func unique(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// yamlToJSON converts a YAML node to JSON (object keys sorted, so equal configs give equal
// bytes).
func yamlToJSON(n *yaml.Node) (json.RawMessage, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	v, err := jsonable(v)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func jsonable(v any) (any, error) {
	var err error
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if t[k], err = jsonable(e); err != nil {
				return nil, err
			}
		}
		return t, nil
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("key %v is not a string", k)
			}
			if m[ks], err = jsonable(e); err != nil {
				return nil, err
			}
		}
		return m, nil
	case []any:
		for i, e := range t {
			if t[i], err = jsonable(e); err != nil {
				return nil, err
			}
		}
		return t, nil
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return nil, fmt.Errorf("%v cannot be represented in JSON", t)
		}
		return t, nil
	default:
		return v, nil
	}
}

// exclude is one entry of exclude_tools.
//
// An entry is matched against references as follows:
//   - "PLUGIN:Tool" removes Tool from the references to that plugin (PLUGIN resolved like in
//     tools, so a path names the same plugin whatever file wrote it);
//   - "PLUGIN" with a slash (a path) removes every reference to that plugin;
//   - a bare word W removes every reference to the plugin named W (the exact reference "W")
//     and the tool named W from every other reference, whatever its plugin.
//
// Removing a tool from a reference that lists tools drops it from the list (and the
// reference once its list is empty); from a reference to every tool it adds the tool to
// ToolRef.Exclude. An entry that matches nothing is not an error (the base may list tools
// the child does not know about).
type exclude struct {
	text   string
	path   string // plugin path, absolute
	lookup string // plugin name
	tool   string // tool name
	bare   bool   // a bare word: lookup and/or tool set from the same word
}

func (e *exclude) matchesPlugin(r *ToolRef) bool {
	return (e.path != "" && e.path == r.Path) || (e.lookup != "" && e.lookup == r.Lookup)
}

func (p *parser) excludes(n *yaml.Node) ([]exclude, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "exclude_tools must be a list, got %s", kindName(n))
	}
	out := make([]exclude, 0, len(n.Content))
	for _, e := range n.Content {
		e = deref(e)
		s, err := p.str(e, "exclude_tools entry")
		if err != nil {
			return nil, err
		}
		ex := exclude{text: s}
		plugin, tool, hasTool := splitRef(s)
		switch {
		case hasTool || isPath(plugin):
			var r ToolRef
			r.Text = s
			if err := p.setPlugin(&r, e, plugin, "exclude_tools entry"); err != nil {
				return nil, err
			}
			ex.path, ex.lookup = r.Path, r.Lookup
			if hasTool {
				if err := p.checkTool(e, tool, "exclude_tools entry", s); err != nil {
					return nil, err
				}
				ex.tool = tool
			}
		default:
			ex.bare = true
			if pluginNameRE.MatchString(s) {
				ex.lookup = s
			}
			if toolNameRE.MatchString(s) {
				ex.tool = s
			}
			if ex.lookup == "" && ex.tool == "" {
				return nil, p.errf(e, "exclude_tools entry %q is neither a tool nor a plugin name", s)
			}
		}
		out = append(out, ex)
	}
	return out, nil
}

// applyExcludes returns refs with the excludes applied (see exclude). refs is not modified.
func applyExcludes(refs []ToolRef, excludes []exclude) []ToolRef {
	out := make([]ToolRef, 0, len(refs))
refs:
	for _, r := range refs {
		r = r.clone()
		for i := range excludes {
			ex := &excludes[i]
			if ex.matchesPlugin(&r) && (ex.bare || ex.tool == "") {
				continue refs
			}
			if ex.tool == "" || !(ex.bare || ex.matchesPlugin(&r)) {
				continue
			}
			if r.Tools == nil {
				if !slices.Contains(r.Exclude, ex.tool) {
					r.Exclude = append(r.Exclude, ex.tool)
				}
				continue
			}
			r.Tools = slices.DeleteFunc(r.Tools, func(t string) bool { return t == ex.tool })
			if len(r.Tools) == 0 {
				continue refs
			}
		}
		out = append(out, r)
	}
	return out
}
