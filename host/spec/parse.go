package spec

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kosong-host/kosong-host/host/hooks"
	"github.com/kosong-host/kosong-host/host/permission"
)

// opt is a field that may be absent from a file. set means the key was present.
type opt[T any] struct {
	v    T
	set  bool
	line int
}

// mark records that the key was present, at line.
func (o *opt[T]) mark(line int) { o.set, o.line = true, line }

// over replaces o with c when c is set: a child file's field over its base's.
func (o *opt[T]) over(c opt[T]) {
	if c.set {
		*o = c
	}
}

// file is one agent spec file as written, relative paths already made absolute.
type file struct {
	path string // absolute
	dir  string // folder of path

	extend           opt[string]
	name             opt[string]
	systemPromptPath opt[string]
	systemPromptArgs map[string]string
	tools            opt[[]ToolRef]
	allowedTools     opt[[]ToolRef]
	excludeTools     opt[[]exclude]
	subagents        opt[map[string]Subagent]
	model            opt[string]
	mcpServers       opt[[]MCPServer]
	sandbox          opt[*Sandbox]
	hooks            opt[[]hooks.Hook]
	permissions      opt[[]permission.Rule]
}

// abs resolves p against the folder of the file.
func (f *file) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(f.dir, p)
}

var (
	topKeys      = []string{"version", "agent"}
	agentKeys    = []string{"extend", "name", "system_prompt_path", "system_prompt_args", "tools", "allowed_tools", "exclude_tools", "subagents", "model", "mcp_servers", "sandbox", "hooks", "permissions"}
	subagentKeys = []string{"path", "description"}
	toolRefKeys  = []string{"plugin", "remote", "name", "tls", "tools", "sha256", "config", "timeout", "env", "allow_secrets", "sandbox", "source", "version"}
)

// parser reads the YAML nodes of one file.
type parser struct {
	f *file
	// mcpConfig: parsing another host's MCP config file, where an
	// unknown server key is a warning (MCPServer.Warnings), not an error.
	mcpConfig bool
}

func (p *parser) errf(n *yaml.Node, format string, args ...any) *Error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{File: p.f.path, Line: line, Msg: oneLine(fmt.Sprintf(format, args...))}
}

func (p *parser) unknownKey(k *yaml.Node, where string, known []string) *Error {
	return p.errf(k, "unknown key %q in %s (known keys: %s)", k.Value, where, strings.Join(known, ", "))
}

// parseFile parses the contents of the agent spec file at path.
func parseFile(path string, data []byte) (*file, error) {
	doc, err := decodeYAML(path, data)
	if err != nil {
		return nil, err
	}
	f := &file{path: path, dir: filepath.Dir(path)}
	p := &parser{f: f}
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	root = deref(root)
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Msg: "Invalid YAML format in agent spec file: " + path}
	}
	err = p.mapping(root, "agent spec", func(k, v *yaml.Node) error {
		switch k.Value {
		case "version":
			if v.Kind != yaml.ScalarNode || isNull(v) || v.Value != SupportedVersion {
				return p.errf(v, "Unsupported agent spec version: %s", nodeText(v))
			}
			return nil
		case "agent":
			return p.agent(v)
		default:
			return p.unknownKey(k, "agent spec", topKeys)
		}
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (p *parser) agent(n *yaml.Node) error {
	f := p.f
	return p.mapping(n, "agent", func(k, v *yaml.Node) error {
		var err error
		switch k.Value {
		case "extend":
			if isNull(v) {
				return nil // Kimi: extend: null means no base
			}
			f.extend.v, err = p.nonEmptyString(v, "extend")
			f.extend.mark(k.Line)
		case "name":
			f.name.v, err = p.str(v, "name")
			f.name.mark(k.Line)
		case "system_prompt_path":
			var s string
			s, err = p.nonEmptyString(v, "system_prompt_path")
			f.systemPromptPath.v = f.abs(s)
			f.systemPromptPath.mark(k.Line)
		case "system_prompt_args":
			f.systemPromptArgs, err = p.stringMap(v, "system_prompt_args")
		case "tools":
			f.tools.v, err = p.toolRefs(v, "tools")
			f.tools.mark(k.Line)
		case "allowed_tools":
			f.allowedTools.v, err = p.toolRefs(v, "allowed_tools")
			f.allowedTools.mark(k.Line)
		case "exclude_tools":
			f.excludeTools.v, err = p.excludes(v)
			f.excludeTools.mark(k.Line)
		case "subagents":
			f.subagents.v, err = p.subagents(v)
			f.subagents.mark(k.Line)
		case "model":
			f.model.v, err = p.str(v, "model")
			f.model.mark(k.Line)
		case "mcp_servers":
			f.mcpServers.v, err = p.mcpServers(v, "mcp_servers")
			f.mcpServers.mark(k.Line)
		case "sandbox":
			f.sandbox.v, err = p.sandbox(v, "agent")
			f.sandbox.mark(k.Line)
		case "hooks":
			f.hooks.v, err = p.hooks(v)
			f.hooks.mark(k.Line)
		case "permissions":
			f.permissions.v, err = p.permissions(v)
			f.permissions.mark(k.Line)
		default:
			return p.unknownKey(k, "agent", agentKeys)
		}
		return err
	})
}

func (p *parser) subagents(n *yaml.Node) (map[string]Subagent, error) {
	out := map[string]Subagent{}
	if isNull(n) {
		return out, nil
	}
	err := p.mapping(n, "subagents", func(k, v *yaml.Node) error {
		name := k.Value
		if name == "" {
			return p.errf(k, "subagents: empty subagent name")
		}
		where := "subagent " + strconv.Quote(name)
		var sa Subagent
		var hasPath, hasDesc bool
		err := p.mapping(v, where, func(k2, v2 *yaml.Node) error {
			var err error
			switch k2.Value {
			case "path":
				var s string
				s, err = p.nonEmptyString(v2, where+": path")
				sa.Path, hasPath = p.f.abs(s), true
			case "description":
				sa.Description, err = p.str(v2, where+": description")
				hasDesc = true
			default:
				return p.unknownKey(k2, where, subagentKeys)
			}
			return err
		})
		if err != nil {
			return err
		}
		if !hasPath {
			return p.errf(k, "%s: path is required", where)
		}
		if !hasDesc {
			return p.errf(k, "%s: description is required", where)
		}
		out[name] = sa
		return nil
	})
	return out, err
}

// mapping calls fn for each key/value pair of the mapping n, in order. Keys must be
// scalars and unique; aliases are followed.
func (p *parser) mapping(n *yaml.Node, what string, fn func(k, v *yaml.Node) error) error {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s must be a mapping, got %s", what, kindName(n))
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return p.errf(k, "%s: keys must be strings, got %s", what, kindName(k))
		}
		if seen[k.Value] {
			return p.errf(k, "duplicate key %q in %s", k.Value, what)
		}
		seen[k.Value] = true
		if err := fn(k, v); err != nil {
			return err
		}
	}
	return nil
}

// str returns the text of a non-null scalar.
func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return "", p.errf(n, "%s must be a string, got %s", what, kindName(n))
	}
	return n.Value, nil
}

func (p *parser) nonEmptyString(n *yaml.Node, what string) (string, error) {
	s, err := p.str(n, what)
	if err == nil && strings.TrimSpace(s) == "" {
		return "", p.errf(n, "%s must not be empty", what)
	}
	return s, err
}

// stringList returns a sequence of strings; null is an empty list.
func (p *parser) stringList(n *yaml.Node, what string) ([]string, error) {
	if isNull(n) {
		return []string{}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "%s must be a list, got %s", what, kindName(n))
	}
	out := make([]string, 0, len(n.Content))
	for _, e := range n.Content {
		s, err := p.str(deref(e), what+" entry")
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) stringMap(n *yaml.Node, what string) (map[string]string, error) {
	out := map[string]string{}
	err := p.mapping(n, what, func(k, v *yaml.Node) error {
		s, err := p.str(v, what+"."+k.Value)
		out[k.Value] = s
		return err
	})
	return out, err
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return "a scalar"
	default:
		return "nothing"
	}
}

// nodeText is a short rendering of a node for messages.
func nodeText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		if isNull(n) {
			return "null"
		}
		return n.Value
	}
	return kindName(n)
}

// sortedUnique sorts and deduplicates s in place.
func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return s
	}
	sort.Strings(s)
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}
