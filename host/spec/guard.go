package spec

import (
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kosong-host/kosong-host/host/hooks"
	"github.com/kosong-host/kosong-host/host/permission"
)

var (
	hookKeys       = []string{"event", "command", "matcher", "timeout"}
	permissionKeys = []string{"allow", "ask", "deny"}
)

// ParseHooks reads a `hooks:` list of FILE (agent.yaml or the configuration
// file): entries {event, command, matcher, timeout (seconds)}. Errors are
// *Error naming the file and line.
func ParseHooks(path string, n *yaml.Node) ([]hooks.Hook, error) {
	p := &parser{f: &file{path: path}}
	return p.hooks(deref(n))
}

// ParsePermissions reads a `permissions:` mapping of FILE: {allow, ask,
// deny}, each a list of rules (see host/permission). Errors are *Error
// naming the file, the line and the rule.
func ParsePermissions(path string, n *yaml.Node) ([]permission.Rule, error) {
	p := &parser{f: &file{path: path}}
	return p.permissions(deref(n))
}

func (p *parser) hooks(n *yaml.Node) ([]hooks.Hook, error) {
	if isNull(n) {
		return []hooks.Hook{}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.errf(n, "hooks must be a list, got %s", kindName(n))
	}
	out := []hooks.Hook{}
	for i, e := range n.Content {
		e = deref(e)
		what := "hooks[" + strconv.Itoa(i) + "]"
		h := hooks.Hook{File: p.f.path, Line: e.Line}
		err := p.mapping(e, what, func(k, v *yaml.Node) error {
			var err error
			switch k.Value {
			case "event":
				h.Event, err = p.nonEmptyString(v, what+".event")
			case "command":
				h.Command, err = p.nonEmptyString(v, what+".command")
			case "matcher":
				h.Matcher, err = p.str(v, what+".matcher")
			case "timeout":
				secs, convErr := strconv.Atoi(v.Value)
				if v.Kind != yaml.ScalarNode || convErr != nil {
					return p.errf(v, "%s.timeout must be a whole number of seconds, got %s", what, nodeText(v))
				}
				h.Timeout = time.Duration(secs) * time.Second
				if h.Timeout < hooks.MinTimeout || h.Timeout > hooks.MaxTimeout {
					return p.errf(v, "%s.timeout: %d s is out of range: 1 to 600 seconds", what, secs)
				}
			default:
				return p.unknownKey(k, what, hookKeys)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if _, err := h.Compile(); err != nil {
			return nil, p.errf(e, "%s: %v", what, err)
		}
		out = append(out, h)
	}
	return out, nil
}

func (p *parser) permissions(n *yaml.Node) ([]permission.Rule, error) {
	out := []permission.Rule{}
	if isNull(n) {
		return out, nil
	}
	err := p.mapping(n, "permissions", func(k, v *yaml.Node) error {
		var effect permission.Effect
		switch k.Value {
		case "allow":
			effect = permission.Allow
		case "ask":
			effect = permission.Ask
		case "deny":
			effect = permission.Deny
		default:
			return p.unknownKey(k, "permissions", permissionKeys)
		}
		if isNull(v) {
			return nil
		}
		if v.Kind != yaml.SequenceNode {
			return p.errf(v, "permissions.%s must be a list of rules, got %s", k.Value, kindName(v))
		}
		for _, e := range v.Content {
			e = deref(e)
			text, err := p.nonEmptyString(e, "permissions."+k.Value+" entry")
			if err != nil {
				return err
			}
			r, err := permission.ParseRule(text, effect)
			if err != nil {
				return p.errf(e, "permissions.%s: %v", k.Value, err)
			}
			r.File, r.Line = p.f.path, e.Line
			out = append(out, r)
		}
		return nil
	})
	return out, err
}
