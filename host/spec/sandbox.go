package spec

import (
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Sandbox is a `sandbox:` block, on a tool reference (for its plugin) or on
// the agent (for every plugin whose references set none):
//
//	sandbox:
//	  read: [/]                        # optional; default: everything
//	  write: [$WORK_DIR, ./out]        # optional; default: $WORK_DIR, $STATE_DIR, $TMPDIR
//	  network: none                    # none | all | [80, 443]; default: all
//	  required: true                   # optional; refuse to run unconfined
//
// A path starting with $WORK_DIR, $STATE_DIR (the plugin's state dir),
// $TMPDIR, $HOME or ~ is resolved when the agent is loaded; another relative
// path is relative to the folder of the file. Paths must exist (checked at
// load).
type Sandbox struct {
	// Read and Write are the paths as resolved here; nil = the default.
	Read, Write []string
	// NetworkAll allows every TCP port; else only Ports (none when empty).
	NetworkAll bool
	Ports      []uint16
	// Required refuses to run the plugin unconfined.
	Required bool
	// File and Line locate the block.
	File string
	Line int
}

// SandboxVars are the variables a sandbox path may start with.
var SandboxVars = []string{"$WORK_DIR", "$STATE_DIR", "$TMPDIR", "$HOME", "~"}

var sandboxKeys = []string{"read", "write", "network", "required"}

// Equal reports whether two blocks say the same (wherever they are).
func (s *Sandbox) Equal(o *Sandbox) bool {
	if s == nil || o == nil {
		return s == o
	}
	return slices.Equal(s.Read, o.Read) && slices.Equal(s.Write, o.Write) && s.NetworkAll == o.NetworkAll &&
		slices.Equal(s.Ports, o.Ports) && s.Required == o.Required
}

func (p *parser) sandbox(n *yaml.Node, where string) (*Sandbox, error) {
	sb := &Sandbox{File: p.f.path, Line: n.Line, NetworkAll: true}
	where += ": sandbox"
	err := p.mapping(n, where, func(k, v *yaml.Node) error {
		switch k.Value {
		case "read", "write":
			paths, err := p.stringList(v, where+": "+k.Value)
			if err != nil {
				return err
			}
			for i, s := range paths {
				if paths[i], err = p.sandboxPath(v, where+": "+k.Value, s); err != nil {
					return err
				}
			}
			if k.Value == "read" {
				sb.Read = paths
			} else {
				sb.Write = paths
			}
		case "network":
			return p.sandboxNetwork(v, where, sb)
		case "required":
			if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
				return p.errf(v, "%s: required must be true or false, got %s", where, nodeText(v))
			}
			sb.Required = v.Value == "true"
		default:
			return p.unknownKey(k, where, sandboxKeys)
		}
		return nil
	})
	return sb, err
}

func (p *parser) sandboxPath(n *yaml.Node, what, s string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "", p.errf(n, "%s: empty path", what)
	}
	if strings.HasPrefix(s, "$") || strings.HasPrefix(s, "~") {
		for _, v := range SandboxVars {
			if s == v || strings.HasPrefix(s, v+"/") {
				return s, nil
			}
		}
		return "", p.errf(n, "%s: %q: unknown variable (known: %s)", what, s, strings.Join(SandboxVars, ", "))
	}
	return p.f.abs(s), nil
}

func (p *parser) sandboxNetwork(v *yaml.Node, where string, sb *Sandbox) error {
	switch {
	case v.Kind == yaml.ScalarNode && v.Value == "all":
		sb.NetworkAll = true
		return nil
	case v.Kind == yaml.ScalarNode && v.Value == "none":
		sb.NetworkAll = false
		return nil
	case v.Kind == yaml.SequenceNode:
		sb.NetworkAll = false
		sb.Ports = []uint16{}
		for _, e := range v.Content {
			e = deref(e)
			port, err := strconv.Atoi(e.Value)
			if e.Kind != yaml.ScalarNode || err != nil || port < 1 || port > 65535 {
				return p.errf(e, "%s: network: invalid port %s (want 1-65535)", where, nodeText(e))
			}
			if !slices.Contains(sb.Ports, uint16(port)) {
				sb.Ports = append(sb.Ports, uint16(port))
			}
		}
		slices.Sort(sb.Ports)
		return nil
	}
	return p.errf(v, "%s: network must be none, all or a list of TCP ports, got %s", where, nodeText(v))
}
