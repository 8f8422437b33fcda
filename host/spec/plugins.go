package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// PluginRef is one plugin to load: every reference to the same plugin (same resolved path,
// or same name) merged.
type PluginRef struct {
	// Name is the display name: the bare plugin name, or the base name of its path.
	Name string
	// Path is the absolute path of the plugin binary if it was given as a path, else "".
	Path string
	// Lookup is the bare plugin name (to be found as PluginPrefix+Lookup), else "".
	Lookup string
	// Tools are the tools to load, in order of first mention; nil means every tool of the
	// plugin (if any reference asks for every tool, every tool it is).
	Tools []string
	// Exclude lists tools to leave out when Tools is nil.
	Exclude []string
	// SHA256 pins the binary (lowercase hex), "" = not pinned.
	SHA256 string
	// Config is the configuration of every tool that has no entry in ToolConfig; nil = none.
	Config json.RawMessage
	// ToolConfig holds the configuration of tools whose references gave a configuration
	// other than Config (a plugin referenced several times with different configs).
	// Nil if every tool uses Config. Use ConfigFor.
	ToolConfig map[string]json.RawMessage
	// Timeout bounds each tool call; 0 = the host's default.
	Timeout time.Duration
	// Env lists the host environment variables the plugin may inherit (sorted, unique).
	Env []string
	// Sandbox confines the plugin: its references' (which must agree), else
	// the agent's; nil = unconfined.
	Sandbox *Sandbox
	// Remote is set for a remote tool server (Path and Lookup are then "").
	Remote *RemoteRef
	// Source and Version say where a plugin named by Lookup is installed
	// from (see ToolRef.Source); "" = the plugin dirs and built-ins.
	Source, Version string
	// Refs are the references merged into this plugin, in order.
	Refs []ToolRef
}

// ConfigFor returns the configuration of the named tool (nil = none).
func (p *PluginRef) ConfigFor(tool string) json.RawMessage {
	if c, ok := p.ToolConfig[tool]; ok {
		return c
	}
	return p.Config
}

// Wants reports whether the named tool of the plugin is to be loaded.
func (p *PluginRef) Wants(tool string) bool {
	if p.Tools == nil {
		return !slices.Contains(p.Exclude, tool)
	}
	return slices.Contains(p.Tools, tool)
}

// Plugins groups s.Tools by plugin, in order of first mention.
//
// Tool lists are merged (every tool wins over named tools). sha256, timeout and env must
// agree among the references that set them; config must agree among references asking for
// every tool, and among references naming the same tool. A tool named by a reference with a
// config gets that config; other tools get the config of a reference asking for every tool.
// A disagreement is an error naming both references.
func (s *Spec) Plugins() ([]PluginRef, error) {
	var (
		out   []PluginRef
		index = map[string]int{}
	)
	for _, r := range s.Tools {
		key := "name:" + r.Lookup
		if r.Path != "" {
			key = "path:" + r.Path
		}
		if r.Remote != nil {
			key = "remote:" + r.Remote.Addr
		}
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, PluginRef{Name: r.Name(), Path: r.Path, Lookup: r.Lookup, Remote: r.Remote})
		}
		out[i].Refs = append(out[i].Refs, r)
	}
	for i := range out {
		if err := out[i].merge(); err != nil {
			return nil, err
		}
		if out[i].Sandbox == nil {
			out[i].Sandbox = s.Sandbox
		}
	}
	return out, nil
}

func conflict(p *PluginRef, what string, a, b *ToolRef) error {
	return &Error{File: b.File, Line: b.Line,
		Msg: fmt.Sprintf("plugin %q: %s conflicts with the reference at %s", p.Name, what, a.Where())}
}

// merge fills p from p.Refs.
func (p *PluginRef) merge() error {
	if p.Remote != nil {
		if err := p.mergeRemote(); err != nil {
			return err
		}
	}
	var (
		shaRef, timeoutRef, envRef, configRef, sandboxRef, sourceRef *ToolRef
		toolConfigRef                                                = map[string]*ToolRef{}
		all                                                          bool
		named                                                        []string
		exclude                                                      []string // intersection over the all-tools refs
	)
	for i := range p.Refs {
		r := &p.Refs[i]
		if r.SHA256 != "" {
			if shaRef != nil && shaRef.SHA256 != r.SHA256 {
				return conflict(p, "sha256", shaRef, r)
			}
			p.SHA256, shaRef = r.SHA256, r
		}
		if r.Source != "" {
			if sourceRef != nil && (sourceRef.Source != r.Source || sourceRef.Version != r.Version) {
				return conflict(p, "source", sourceRef, r)
			}
			p.Source, p.Version, sourceRef = r.Source, r.Version, r
		}
		if r.Timeout != 0 {
			if timeoutRef != nil && timeoutRef.Timeout != r.Timeout {
				return conflict(p, "timeout", timeoutRef, r)
			}
			p.Timeout, timeoutRef = r.Timeout, r
		}
		if len(r.Env) > 0 {
			if envRef != nil && !slices.Equal(envRef.Env, r.Env) {
				return conflict(p, "env", envRef, r)
			}
			p.Env, envRef = slices.Clone(r.Env), r
		}
		if r.Sandbox != nil {
			if sandboxRef != nil && !sandboxRef.Sandbox.Equal(r.Sandbox) {
				return conflict(p, "sandbox", sandboxRef, r)
			}
			p.Sandbox, sandboxRef = r.Sandbox, r
		}
		if r.Tools == nil {
			if !all {
				exclude = slices.Clone(r.Exclude)
			} else {
				exclude = slices.DeleteFunc(exclude, func(t string) bool { return !slices.Contains(r.Exclude, t) })
			}
			all = true
			if r.Config != nil {
				if configRef != nil && !bytes.Equal(configRef.Config, r.Config) {
					return conflict(p, "config", configRef, r)
				}
				p.Config, configRef = r.Config, r
			}
			continue
		}
		for _, t := range r.Tools {
			if !slices.Contains(named, t) {
				named = append(named, t)
			}
			if r.Config == nil {
				continue
			}
			if prev := toolConfigRef[t]; prev != nil && !bytes.Equal(prev.Config, r.Config) {
				return conflict(p, fmt.Sprintf("config of tool %q", t), prev, r)
			}
			toolConfigRef[t] = r
		}
	}

	if all {
		p.Exclude = slices.DeleteFunc(exclude, func(t string) bool { return slices.Contains(named, t) })
		if len(p.Exclude) == 0 {
			p.Exclude = nil
		}
	} else {
		p.Tools = named
	}

	// Per-tool configs: drop those equal to Config; if there is no plugin-wide config and
	// every tool has the same one, make it the plugin-wide config.
	for t, r := range toolConfigRef {
		if bytes.Equal(r.Config, p.Config) {
			continue
		}
		if p.ToolConfig == nil {
			p.ToolConfig = map[string]json.RawMessage{}
		}
		p.ToolConfig[t] = r.Config
	}
	if p.Config == nil && !all && len(p.ToolConfig) == len(p.Tools) {
		var common json.RawMessage
		same := true
		for _, c := range p.ToolConfig {
			if common == nil {
				common = c
			} else if !bytes.Equal(common, c) {
				same = false
				break
			}
		}
		if same {
			p.Config, p.ToolConfig = common, nil
		}
	}
	return nil
}
