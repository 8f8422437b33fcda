// Package permission holds the permission rules of an agent
// (`permissions: {allow, ask, deny}` in agent.yaml and in the configuration
// file) and decides a tool call by them: deny, then ask, then allow, the
// first matching rule of the first list deciding; when none matches, the
// tool's own approval request decides as before.
//
// A rule names a tool and, optionally, a pattern on the argument the tool
// declared for rules in Describe (pluginsdk.WithRuleArgument):
//
//	Shell                    every call of Shell (same as Shell(*))
//	Shell(git status*)       command glob: * spans anything, spaces and slashes too
//	Shell(npm run test:*)    a trailing :* is " *": the command, then anything after a space
//	WriteFile(src/**)        path rule (gitignore-style, ** spans directories)
//	ReadFile(./secrets/**)   path rule anchored at the work dir
//	FetchURL(https://docs.example.com/*)  URL glob
//	FetchURL(domain:example.com)          host example.com (*.example.com: its subdomains)
//	mcp:github__*            MCP tools by name (a glob over the toolset names)
//
// Shell commands are parsed with a bash parser (ParseCommand) into their
// simple commands, nested ones included: those in $( ), backticks, <( ),
// >( ), "...", here-documents, functions, subshells, pipelines and lists,
// and the bodies of sh/bash/zsh -c, eval, trap and alias.
//
// An allow rule approves a command only when every simple command in it
// matches an allow rule (as written, or without its quotes and escapes),
// none redirects output to a file unless the rule's pattern has the
// redirection (Shell(make * > build.log); reading, 2>&1 and writing to
// /dev/null need nothing), and the parser can prove it: a parse error, a
// dynamic command name ($X, a glob), eval or sh -c of a variable,
// arithmetic on variables and the like are never allowed by a rule.
//
// A deny or ask rule matches when any simple command matches, as written,
// without quotes, or resolved: the binary's directory dropped (/bin/rm and
// ./rm are rm) and wrappers stripped (command, builtin, exec, env, nohup,
// time, nice, timeout, sudo, doas, stdbuf, setsid, busybox, xargs). When a
// tool has deny rules and part of a command cannot be resolved, the call
// is denied (asked for ask rules): a deny rule holds under --yolo too.
//
// Path patterns: //abs is absolute, ~/x is in the home directory, /x is
// relative to the folder of the file declaring the rule, ./x and x to the
// work dir; a bare x (no leading ./ or /) in deny and ask matches at any
// depth below the work dir too. For a symbolic link, deny and ask match if
// the link or its target does, allow only if both do.
package permission

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Effect is what a rule list does to a matching call.
type Effect string

// The effects, and None when no rule matched.
const (
	None  Effect = ""
	Allow Effect = "allow"
	Ask   Effect = "ask"
	Deny  Effect = "deny"
)

// Rule is one parsed rule.
type Rule struct {
	// Text is the rule as written.
	Text string
	// File and Line say where it was written (Line 0: unknown).
	File string
	Line int
	// Effect is the list it is in.
	Effect Effect
	// Tool is the tool name, or the name glob of an MCP rule.
	Tool string
	// MCP marks an mcp:GLOB rule.
	MCP bool
	// Pattern is the pattern on the rule argument; "" matches every call.
	Pattern string

	nameRE *regexp.Regexp // MCP rules
	globRE *regexp.Regexp // command, URL and plain patterns
}

// Where is "FILE:LINE" (or FILE) for messages.
func (r Rule) Where() string {
	if r.Line > 0 {
		return fmt.Sprintf("%s:%d", r.File, r.Line)
	}
	return r.File
}

// ParseRule parses a rule of the given list. The error says what is wrong,
// without the location (the caller names the file).
func ParseRule(text string, effect Effect) (Rule, error) {
	r := Rule{Text: text, Effect: effect}
	s := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(s, "mcp:"); ok {
		if rest == "" || strings.ContainsAny(rest, "()") {
			return r, fmt.Errorf("rule %q: want mcp:TOOL_GLOB, e.g. mcp:github__*", text)
		}
		re, err := globRegexp(rest, false)
		if err != nil {
			return r, fmt.Errorf("rule %q: %v", text, err)
		}
		r.Tool, r.MCP, r.nameRE = rest, true, re
		return r, nil
	}
	name, pattern := s, ""
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return r, fmt.Errorf("rule %q: the pattern has no closing parenthesis: want Tool(pattern)", text)
		}
		name, pattern = s[:i], s[i+1:len(s)-1]
		if strings.TrimSpace(pattern) == "" {
			return r, fmt.Errorf("rule %q: empty pattern: write %s or %s(*)", text, name, name)
		}
	} else if strings.ContainsRune(s, ')') {
		return r, fmt.Errorf("rule %q: unbalanced parenthesis: want Tool(pattern)", text)
	}
	if !validToolName.MatchString(name) {
		return r, fmt.Errorf("rule %q: %q is not a tool name: want Tool or Tool(pattern)", text, name)
	}
	if pattern == "*" {
		pattern = ""
	}
	r.Tool, r.Pattern = name, pattern
	if pattern != "" {
		// Checked both ways here; which one applies depends on the tool's
		// rule argument, known once the tools are loaded (Bind).
		if !doublestar.ValidatePattern(pattern) {
			return r, fmt.Errorf("rule %q: malformed pattern %q (unbalanced [ ] or { })", text, pattern)
		}
		re, err := globRegexp(pattern, true)
		if err != nil {
			return r, fmt.Errorf("rule %q: %v", text, err)
		}
		r.globRE = re
	}
	return r, nil
}

var validToolName = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

// globRegexp turns a glob where * spans anything (spaces and slashes
// included) into an anchored regular expression. With command, a trailing
// ":*" or " *" also matches the bare command.
func globRegexp(glob string, command bool) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	tail := ""
	if command {
		switch {
		case strings.HasSuffix(glob, ":*"):
			glob, tail = strings.TrimSuffix(glob, ":*"), `(?:\s.*)?`
		case strings.HasSuffix(glob, " *"):
			glob, tail = strings.TrimSuffix(glob, " *"), `(?:\s.*)?`
		}
	}
	for _, c := range glob {
		if c == '*' {
			b.WriteString(".*")
			continue
		}
		b.WriteString(regexp.QuoteMeta(string(c)))
	}
	b.WriteString(tail)
	b.WriteString("$")
	return regexp.Compile("(?s)" + b.String())
}
