package permission

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Tool is what the rules know of a tool.
type Tool struct {
	Name string
	// RuleArgument is the argument patterns match ("" none).
	RuleArgument string
	// MCP marks a tool of an MCP server.
	MCP bool
}

// Set is the rules of an agent, from every file that declares some: the
// lists are joined, so a deny anywhere wins.
type Set struct {
	Deny, Ask, Allow []Rule
	// WorkDir anchors relative path patterns and path arguments.
	WorkDir string
	// Home is the home directory for ~/ patterns.
	Home string
}

// Empty reports whether there are no rules.
func (s *Set) Empty() bool { return s == nil || len(s.Deny)+len(s.Ask)+len(s.Allow) == 0 }

// Add appends rules to their lists.
func (s *Set) Add(rules ...Rule) {
	for _, r := range rules {
		switch r.Effect {
		case Deny:
			s.Deny = append(s.Deny, r)
		case Ask:
			s.Ask = append(s.Ask, r)
		default:
			s.Allow = append(s.Allow, r)
		}
	}
}

// Bind checks every rule against the tools: a rule naming no tool, or with
// a pattern for a tool that declares no rule argument, is an error naming
// the rule and its file. MCP rules need not match a tool (servers come and
// go).
func (s *Set) Bind(tools []Tool) error {
	byName := map[string]Tool{}
	for _, t := range tools {
		byName[t.Name] = t
	}
	for _, list := range [][]Rule{s.Deny, s.Ask, s.Allow} {
		for _, r := range list {
			if r.MCP {
				continue
			}
			t, ok := byName[r.Tool]
			if !ok {
				return fmt.Errorf("%s: permissions.%s: rule %q: unknown tool %s (the agent's tools: %s)",
					r.Where(), r.Effect, r.Text, r.Tool, toolNames(tools))
			}
			if r.Pattern != "" && t.RuleArgument == "" {
				return fmt.Errorf("%s: permissions.%s: rule %q: tool %s declares no argument for rules: write %s alone",
					r.Where(), r.Effect, r.Text, r.Tool, r.Tool)
			}
		}
	}
	return nil
}

func toolNames(tools []Tool) string {
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		if !t.MCP {
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Decision is the outcome of the rules for one call.
type Decision struct {
	// Effect is None when no rule matched.
	Effect Effect
	// Rule is the deciding rule (zero when none).
	Rule Rule
	// Value is the argument value matched ("" for none).
	Value string
	// Reason says why, in one line.
	Reason string
	// Unproven says what part of a command argument the rules cannot
	// check ("" for none); a deny or ask decided for that reason has it.
	Unproven string
	// Parts are the simple commands of a command argument and what the
	// rules said of each (commands only, when a rule with a pattern was
	// checked).
	Parts []Part
}

// Decide runs the rules on a call with its (validated) arguments: the first
// matching deny rule, else ask rule, else allow rule.
func (s *Set) Decide(t Tool, args json.RawMessage) Decision {
	value := argument(t, args)
	if kind(t.RuleArgument) == kindCommand {
		return s.decideCommand(t, value)
	}
	if s != nil {
		for _, list := range [][]Rule{s.Deny, s.Ask, s.Allow} {
			for _, r := range list {
				if s.matches(r, t, value) {
					d := Decision{Effect: r.Effect, Rule: r, Value: value}
					d.Reason = fmt.Sprintf("%s rule %q (%s) matches", r.Effect, r.Text, r.Where())
					if r.Pattern != "" && t.RuleArgument != "" {
						d.Reason += fmt.Sprintf(" %s %q", t.RuleArgument, value)
					}
					return d
				}
			}
		}
	}
	d := Decision{Value: value, Reason: "no rule matches: the tool's own approval request decides"}
	return d
}

// argument is the rule argument's value as text ("" when absent or not a
// string).
func argument(t Tool, args json.RawMessage) string {
	if t.RuleArgument == "" {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	switch v := m[t.RuleArgument].(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

func (s *Set) matches(r Rule, t Tool, value string) bool {
	if r.MCP {
		return t.MCP && r.nameRE.MatchString(t.Name)
	}
	if r.Tool != t.Name {
		return false
	}
	if r.Pattern == "" {
		return true
	}
	switch kind(t.RuleArgument) {
	case kindPath:
		return s.matchPath(r, value)
	case kindURL:
		return matchURL(r, value)
	}
	return r.globRE.MatchString(value)
}

type argKind int

const (
	kindPlain argKind = iota
	kindPath
	kindURL
	kindCommand
)

// kind is how a rule argument is matched, by its name.
func kind(arg string) argKind {
	switch arg {
	case "path", "file_path", "directory", "dir", "file":
		return kindPath
	case "url", "uri":
		return kindURL
	case "command", "cmd":
		return kindCommand
	}
	return kindPlain
}

func matchURL(r Rule, raw string) bool {
	if host, ok := strings.CutPrefix(r.Pattern, "domain:"); ok {
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" {
			return false
		}
		h := strings.ToLower(u.Hostname())
		host = strings.ToLower(host)
		if sub, ok := strings.CutPrefix(host, "*."); ok {
			return strings.HasSuffix(h, "."+sub)
		}
		return h == host
	}
	return r.globRE.MatchString(raw)
}

// matchPath matches a path argument against a path pattern (see the package
// documentation).
func (s *Set) matchPath(r Rule, value string) bool {
	if value == "" {
		value = "."
	}
	p := value
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.WorkDir, p)
	}
	p = filepath.Clean(p)
	candidates := []string{p}
	if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
		candidates = append(candidates, real)
	}
	patterns := s.pathPatterns(r)
	match := func(c string) bool {
		c = filepath.ToSlash(c)
		for _, pat := range patterns {
			if ok, _ := doublestar.Match(pat, c); ok {
				return true
			}
		}
		return false
	}
	if r.Effect == Allow {
		for _, c := range candidates {
			if !match(c) {
				return false
			}
		}
		return true
	}
	for _, c := range candidates {
		if match(c) {
			return true
		}
	}
	return false
}

// pathPatterns are the absolute slash patterns a path rule stands for.
func (s *Set) pathPatterns(r Rule) []string {
	pat := r.Pattern
	work := escapeGlob(filepath.ToSlash(s.WorkDir))
	switch {
	case strings.HasPrefix(pat, "//"):
		return []string{path.Clean(pat[1:])}
	case strings.HasPrefix(pat, "~/"):
		home := s.Home
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		return []string{path.Join(escapeGlob(filepath.ToSlash(home)), pat[2:])}
	case strings.HasPrefix(pat, "/"):
		return []string{path.Join(escapeGlob(filepath.ToSlash(filepath.Dir(r.File))), pat)}
	case strings.HasPrefix(pat, "./"):
		return []string{path.Join(work, pat[2:])}
	}
	out := []string{path.Join(work, pat)}
	if r.Effect != Allow {
		out = append(out, path.Join(work, "**", pat))
	}
	return out
}

// escapeGlob quotes the glob metacharacters of a directory name.
func escapeGlob(dir string) string {
	var b strings.Builder
	for _, c := range dir {
		if strings.ContainsRune(`*?[]{}\\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
