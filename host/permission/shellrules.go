package permission

import (
	"fmt"
	"strings"
)

// Part is one simple command of a command argument and what the rules said
// of it.
type Part struct {
	// Command is the simple command as written, with its redirections to
	// files.
	Command string
	// Context says where it sits ("" at the top, else e.g. "in $( )").
	Context string
	// Rule is the allow rule that matches it ("" none).
	Rule string
	// Note says why no allow rule matches it ("" when one does).
	Note string
}

// decideCommand decides a call of a tool whose rule argument is a shell
// command. Deny and ask rules match when any simple command matches (as
// written, without quotes, or resolved through paths and wrappers); when
// the tool has such rules and part of the command cannot be checked, the
// call is denied (asked for ask rules). Allow rules allow a call only when
// every simple command matches one, none writes to a file unless the rule
// has the redirection, and nothing in it is unproven.
func (s *Set) decideCommand(t Tool, value string) Decision {
	var cmd *Command
	parsed := func() *Command {
		if cmd == nil {
			c := ParseCommand(value)
			cmd = &c
		}
		return cmd
	}
	whole := func(r Rule) Decision {
		return Decision{Effect: r.Effect, Rule: r, Value: value,
			Reason: fmt.Sprintf("%s rule %q (%s) matches", r.Effect, r.Text, r.Where())}
	}
	if s != nil {
		for _, list := range [][]Rule{s.Deny, s.Ask} {
			var checked []Rule
			for _, r := range list {
				switch {
				case r.MCP:
					if t.MCP && r.nameRE.MatchString(t.Name) {
						return whole(r)
					}
					continue
				case r.Tool != t.Name:
					continue
				case r.Pattern == "":
					return whole(r)
				}
				if sc, form, ok := matchAny(r, parsed()); ok {
					d := whole(r)
					d.Reason += fmt.Sprintf(" `%s`%s", form, sc.Where())
					if written := sc.written(); form != written {
						d.Reason += fmt.Sprintf(", written `%s`", written)
					}
					return d
				}
				checked = append(checked, r)
			}
			if len(checked) > 0 && len(cmd.Unproven) > 0 {
				r := checked[0]
				return Decision{Effect: r.Effect, Rule: r, Value: value, Unproven: cmd.Unproven[0],
					Reason: fmt.Sprintf("cannot check the command against %s rule %q (%s): %s",
						r.Effect, r.Text, r.Where(), cmd.Unproven[0])}
			}
		}
	}
	return s.allowCommand(t, value, parsed)
}

func (s *Set) allowCommand(t Tool, value string, parsed func() *Command) Decision {
	none := Decision{Value: value, Reason: "no rule matches: the tool's own approval request decides"}
	var rules []Rule
	if s != nil {
		for _, r := range s.Allow {
			switch {
			case r.MCP:
				if t.MCP && r.nameRE.MatchString(t.Name) {
					return Decision{Effect: Allow, Rule: r, Value: value, Reason: fmt.Sprintf("allow rule %q (%s) matches", r.Text, r.Where())}
				}
				continue
			case r.Tool != t.Name:
				continue
			case r.Pattern == "":
				return Decision{Effect: Allow, Rule: r, Value: value, Reason: fmt.Sprintf("allow rule %q (%s) matches", r.Text, r.Where())}
			}
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return none
	}
	c := parsed()
	var first Rule
	used := map[string]bool{}
	failed := ""
	for _, sc := range c.Simple {
		p := Part{Command: sc.written(), Context: sc.Context}
		for _, r := range rules {
			if allowMatches(r, sc) {
				p.Rule = r.Text
				if first.Text == "" {
					first = r
				}
				used[r.Text] = true
				break
			}
		}
		if p.Rule == "" {
			p.Note = "no allow rule matches"
			if len(sc.Writes) > 0 {
				p.Note = "redirection to a file: " + strings.Join(sc.Writes, " ") +
					" (an allow rule allows one only when its pattern has the redirection)"
			}
			if failed == "" {
				failed = fmt.Sprintf("`%s`%s: %s", p.Command, sc.Where(), p.Note)
			}
		}
		none.Parts = append(none.Parts, p)
	}
	switch {
	case len(c.Unproven) > 0:
		none.Unproven = c.Unproven[0]
		none.Reason = "not allowed by rules: cannot prove it safe: " + c.Unproven[0]
	case len(c.Writes) > 0:
		none.Reason = "not allowed by rules: redirection to a file: " + strings.Join(c.Writes, " ")
	case failed != "":
		none.Reason = "not allowed by rules: " + failed
	case len(c.Simple) == 0:
		none.Reason = "not allowed by rules: no command"
	default:
		d := Decision{Effect: Allow, Rule: first, Value: value, Parts: none.Parts}
		if len(used) == 1 {
			d.Reason = fmt.Sprintf("allow rule %q (%s) matches every command in it", first.Text, first.Where())
		} else {
			var list []string
			for _, p := range none.Parts {
				list = append(list, fmt.Sprintf("`%s` by %q", p.Command, p.Rule))
			}
			d.Reason = "allow rules match every command in it: " + strings.Join(list, ", ")
		}
		return d
	}
	return none
}

// written is the simple command as written, with its redirections to
// files.
func (sc Simple) written() string {
	if len(sc.Writes) == 0 {
		return sc.Words
	}
	return sc.Words + " " + strings.Join(sc.Writes, " ")
}

// allowMatches: the command as written or without quotes matches; a
// command writing to a file matches only a rule whose pattern has a
// redirection, and then with its redirections.
func allowMatches(r Rule, sc Simple) bool {
	forms := []string{sc.Words, sc.Literal}
	suffix := ""
	if len(sc.Writes) > 0 {
		if !strings.Contains(r.Pattern, ">") {
			return false
		}
		suffix = " " + strings.Join(sc.Writes, " ")
	}
	for _, f := range forms {
		if r.globRE.MatchString(f + suffix) {
			return true
		}
	}
	return false
}

// matchAny finds a simple command a deny or ask rule matches: as written,
// without quotes, with its redirections, or resolved.
func matchAny(r Rule, c *Command) (Simple, string, bool) {
	for _, sc := range c.Simple {
		forms := []string{sc.Words, sc.Literal}
		if len(sc.Writes) > 0 {
			w := " " + strings.Join(sc.Writes, " ")
			forms = append(forms, sc.Words+w, sc.Literal+w)
		}
		forms = append(forms, sc.Resolved...)
		for _, f := range forms {
			if r.globRE.MatchString(f) {
				return sc, f, true
			}
		}
	}
	return Simple{}, "", false
}
