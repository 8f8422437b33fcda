package permission

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Limits of ParseCommand: longer commands and deeper shell bodies are not
// checked (they are unproven).
const (
	maxCommandBytes = 64 << 10
	maxBodyDepth    = 3
	maxUnwrap       = 8
	maxNesting      = 64
	maxParenDepth   = 128
)

// parenDepth is how deep ( nest in src, quotes ignored.
func parenDepth(src string) int {
	depth, most := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(':
			depth++
			most = max(most, depth)
		case ')':
			depth = max(depth-1, 0)
		}
	}
	return most
}

// Command is a shell command as the rules see it: every simple command it
// runs, and what the parser cannot vouch for.
type Command struct {
	// Simple lists every simple command in source order, nested ones
	// included: those in $( ), backticks, <( ), >( ), "...", here-documents,
	// parameter expansions, function bodies, subshells, pipelines and lists,
	// and the bodies of sh -c, bash -c, eval, trap and alias.
	Simple []Simple
	// Unproven says why parts of the command cannot be checked (a parse
	// error, a dynamic command name, eval of a dynamic string...).
	Unproven []string
	// Writes are redirections to a file on a compound command ({ }, ( ),
	// if, for...) or on no command at all (`> F` truncates F).
	Writes []string
}

// Simple is one simple command.
type Simple struct {
	// Words is the command as written: its assignments and words.
	Words string
	// Literal is Words with quotes and escapes removed from the words that
	// have no expansion (a word with spaces is single-quoted).
	Literal string
	// Resolved are the command lines deny and ask rules also match: the
	// command with its name's directory dropped (/bin/rm -> rm), then the
	// command each wrapper runs (command, builtin, exec, env, nohup, time,
	// nice, timeout, sudo, doas, stdbuf, setsid, busybox, xargs).
	Resolved []string
	// Writes are its redirections to a file, as written ("> out.txt").
	Writes []string
	// Context says where it sits ("" at the top, else e.g. "in $( )").
	Context string
}

// Where is the command's context for messages ("" or " (in $( ))").
func (s Simple) Where() string {
	if s.Context == "" {
		return ""
	}
	return " (" + s.Context + ")"
}

// ParseCommand parses a command with a bash parser (mvdan.cc/sh/v3/syntax)
// and lists its simple commands. It never fails: what it cannot read or
// resolve goes to Unproven.
func ParseCommand(src string) Command {
	var c Command
	a := &analysis{c: &c}
	a.parse(src, "", 0)
	return c
}

type analysis struct {
	c *Command
}

func (a *analysis) unproven(why, text string) {
	text = strings.TrimSpace(text)
	if len(text) > 80 {
		text = text[:77] + "..."
	}
	text = strings.ReplaceAll(text, "\n", `\n`)
	msg := why
	if text != "" {
		msg += ": " + text
	}
	for _, u := range a.c.Unproven {
		if u == msg {
			return
		}
	}
	a.c.Unproven = append(a.c.Unproven, msg)
}

// parse parses src (the whole command, or a shell body found in it) and
// walks it.
func (a *analysis) parse(src, context string, depth int) {
	if depth > maxBodyDepth {
		a.unproven(fmt.Sprintf("shell bodies nested more than %d deep", maxBodyDepth), src)
		return
	}
	if len(src) > maxCommandBytes {
		a.unproven(fmt.Sprintf("longer than %d KiB", maxCommandBytes>>10), "")
		return
	}
	if parenDepth(src) > maxParenDepth {
		// The parser backtracks on deep (( and takes seconds there.
		a.unproven(fmt.Sprintf("parentheses nested more than %d deep", maxParenDepth), "")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.unproven("cannot parse", err.Error())
		return
	}
	w := &walker{a: a, src: src, context: context, depth: depth}
	w.stmts(f.Stmts)
}

// walker walks one parsed source.
type walker struct {
	a       *analysis
	src     string
	context string
	depth   int
	nesting int
}

// in is a walker for commands nested in this one's ($( ), <( )...); nil
// (and the command unproven) past maxNesting levels.
func (w *walker) in(what string) *walker {
	if w.nesting >= maxNesting {
		w.a.unproven(fmt.Sprintf("substitutions nested more than %d deep", maxNesting), "")
		return nil
	}
	ctx := "in " + what
	if w.context != "" {
		ctx += ", " + w.context
	}
	return &walker{a: w.a, src: w.src, context: ctx, depth: w.depth, nesting: w.nesting + 1}
}

// text is a node as written.
func (w *walker) text(n syntax.Node) string {
	if n == nil {
		return ""
	}
	start, end := n.Pos().Offset(), n.End().Offset()
	if n.Pos().IsValid() && n.End().IsValid() && start <= end && end <= uint(len(w.src)) {
		return w.src[start:end]
	}
	var b strings.Builder
	if syntax.NewPrinter().Print(&b, n) != nil {
		return "?"
	}
	return b.String()
}

func (w *walker) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

func (w *walker) stmt(s *syntax.Stmt) {
	var writes []string
	for _, r := range s.Redirs {
		if w.redirect(r) {
			writes = append(writes, w.redirText(r))
		}
	}
	switch c := s.Cmd.(type) {
	case nil:
		w.a.c.Writes = append(w.a.c.Writes, writes...)
	case *syntax.CallExpr:
		w.call(c, writes)
	case *syntax.DeclClause:
		at := w.reserve()
		for _, as := range c.Args {
			w.assign(as, true)
		}
		text := w.text(c)
		w.set(at, Simple{Words: text, Literal: text, Resolved: []string{text}, Writes: writes})
	case *syntax.LetClause:
		at := w.reserve()
		for _, e := range c.Exprs {
			w.arith(e)
		}
		text := w.text(c)
		w.set(at, Simple{Words: text, Literal: text, Resolved: []string{text}, Writes: writes})
	default:
		w.a.c.Writes = append(w.a.c.Writes, writes...)
		w.compound(c)
	}
}

// reserve keeps the place of a simple command whose words are walked
// before it is known, so that it comes before the commands nested in it.
func (w *walker) reserve() int {
	w.a.c.Simple = append(w.a.c.Simple, Simple{})
	return len(w.a.c.Simple) - 1
}

func (w *walker) set(at int, s Simple) {
	s.Context = w.context
	w.a.c.Simple[at] = s
}

func (w *walker) compound(c syntax.Command) {
	switch c := c.(type) {
	case *syntax.Block:
		w.stmts(c.Stmts)
	case *syntax.Subshell:
		w.stmts(c.Stmts)
	case *syntax.BinaryCmd:
		w.stmt(c.X)
		w.stmt(c.Y)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			w.stmts(c.Cond)
			w.stmts(c.Then)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond)
		w.stmts(c.Do)
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, it := range l.Items {
				w.word(it)
			}
		case *syntax.CStyleLoop:
			for _, e := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
				if e != nil {
					w.arith(e)
				}
			}
		}
		w.stmts(c.Do)
	case *syntax.CaseClause:
		w.word(c.Word)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				w.word(p)
			}
			w.stmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		w.stmt(c.Body)
	case *syntax.ArithmCmd:
		w.arith(c.X)
	case *syntax.TestClause:
		w.test(c.X)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			w.stmt(c.Stmt)
		}
	case *syntax.CoprocClause:
		w.stmt(c.Stmt)
	default:
		w.a.unproven("unknown construct", w.text(c))
	}
}

// redirect walks a redirection's words and reports whether it writes to a
// file. Reading (<, <<, <<<, <&), duplicating or closing descriptors
// (2>&1, >&-) and writing to /dev/null, /dev/stdout or /dev/stderr do not.
func (w *walker) redirect(r *syntax.Redirect) bool {
	if r.Word != nil {
		w.word(r.Word)
	}
	if r.Hdoc != nil {
		if in := w.in("a here-document"); in != nil {
			in.word(r.Hdoc)
		}
	}
	target, lit := "", false
	if r.Word != nil {
		target, lit = literal(r.Word)
	}
	switch r.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn:
		return false
	case syntax.DplOut:
		if lit && (target == "-" || isDigits(strings.TrimSuffix(target, "-"))) {
			return false
		}
	}
	if lit {
		switch target {
		case "/dev/null", "/dev/stdout", "/dev/stderr":
			return false
		}
	}
	return true
}

// redirText is a redirection as rules see it: fd, operator, one space,
// target as written ("2> err.log").
func (w *walker) redirText(r *syntax.Redirect) string {
	n := ""
	if r.N != nil {
		n = w.text(r.N)
	}
	return n + r.Op.String() + " " + w.text(r.Word)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (w *walker) assign(as *syntax.Assign, decl bool) {
	if as.Index != nil {
		w.index(as.Index)
	}
	if as.Value != nil {
		w.word(as.Value)
		if decl && as.Naked {
			// declare "$x": the word is read as an option or an
			// assignment at run time.
			if v, ok := literal(as.Value); !ok || strings.Contains(v, "[") {
				w.a.unproven("a variable name the parser cannot see (bash evaluates a subscript in it)", w.text(as.Value))
			}
		}
	}
	if as.Array != nil {
		for _, e := range as.Array.Elems {
			if e.Index != nil {
				w.index(e.Index)
			}
			if e.Value != nil {
				w.word(e.Value)
			}
		}
	}
}

func (w *walker) call(c *syntax.CallExpr, writes []string) {
	at := w.reserve()
	var words, lits []string
	for _, as := range c.Assigns {
		w.assign(as, false)
		t := w.text(as)
		words, lits = append(words, t), append(lits, t)
	}
	for _, arg := range c.Args {
		w.word(arg)
		words = append(words, w.text(arg))
		lits = append(lits, w.literalText(arg))
	}
	s := Simple{Words: strings.Join(words, " "), Literal: strings.Join(lits, " "), Writes: writes}
	if len(c.Args) > 0 {
		s.Resolved = w.resolve(c.Args)
	}
	w.set(at, s)
}

// literalText is a word's value when it has no expansion (quoted if it
// has spaces or quotes, or is empty), else the word as written.
func (w *walker) literalText(word *syntax.Word) string {
	v, ok := literal(word)
	if !ok {
		return w.text(word)
	}
	if v == "" || strings.ContainsAny(v, " \t\n'\"") {
		if q, err := syntax.Quote(v, syntax.LangBash); err == nil {
			return q
		}
		return w.text(word)
	}
	return v
}

// word walks the expansions of a word.
func (w *walker) word(word *syntax.Word) {
	if word == nil {
		return
	}
	lits := ""
	for _, p := range word.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			lits += l.Value
		} else {
			lits += " "
		}
		w.part(p)
	}
	if zshExpansion.MatchString(lits) {
		// Plain text to bash; zsh expands $~x (a glob of x's value,
		// whose qualifiers can run code), $=x, $^x, $+x.
		w.a.unproven("zsh expansion", w.text(word))
	}
}

var zshExpansion = regexp.MustCompile(`\$[~=^+]`)

func (w *walker) part(p syntax.WordPart) {
	switch p := p.(type) {
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			w.part(q)
		}
	case *syntax.CmdSubst:
		what := "$( )"
		if p.Backquotes {
			what = "` `"
		}
		if in := w.in(what); in != nil {
			in.stmts(p.Stmts)
		}
	case *syntax.ProcSubst:
		if in := w.in(p.Op.String() + " )"); in != nil {
			in.stmts(p.Stmts)
		}
	case *syntax.ArithmExp:
		w.arith(p.X)
	case *syntax.ParamExp:
		w.param(p)
	case *syntax.ExtGlob:
		w.a.unproven("extended glob (a zsh glob qualifier runs code)", w.text(p))
	case *syntax.BraceExp:
		for _, e := range p.Elems {
			w.word(e)
		}
	}
}

func (w *walker) param(p *syntax.ParamExp) {
	if p.Flags != nil || p.NestedParam != nil {
		w.a.unproven("zsh parameter flags", w.text(p))
	}
	if p.Excl && p.Names == 0 && !allIndex(p.Index) {
		w.a.unproven("indirect expansion (bash evaluates a subscript in the variable's value)", w.text(p))
	}
	if p.Index != nil {
		w.index(p.Index)
	}
	if p.Slice != nil {
		if p.Slice.Offset != nil {
			w.arith(p.Slice.Offset)
		}
		if p.Slice.Length != nil {
			w.arith(p.Slice.Length)
		}
	}
	if p.Repl != nil {
		w.word(p.Repl.Orig)
		w.word(p.Repl.With)
	}
	if p.Exp != nil {
		if p.Exp.Op == syntax.OtherParamOps {
			if v, _ := literal(p.Exp.Word); strings.ContainsAny(v, "PK") || p.Exp.Word == nil {
				w.a.unproven("prompt expansion (${x@P} runs command substitutions in the value)", w.text(p))
			}
		}
		w.word(p.Exp.Word)
	}
}

// allIndex reports whether an index is [@] or [*].
func allIndex(e syntax.ArithmExpr) bool {
	if wd, ok := e.(*syntax.Word); ok {
		v, lit := literal(wd)
		return lit && (v == "@" || v == "*")
	}
	return false
}

func (w *walker) index(e syntax.ArithmExpr) {
	if allIndex(e) {
		return
	}
	w.arith(e)
}

var numberRE = regexp.MustCompile(`^(?:0[xX][0-9a-fA-F]+|[0-9]+(?:#[0-9a-zA-Z@_]+)?)$`)

// arith checks an arithmetic expression: bash evaluates the value of a
// variable (or of an expansion) used in one as an expression itself, and an
// array subscript there runs command substitutions, so only numbers and $#,
// $?, $$, $! are proven.
func (w *walker) arith(e syntax.ArithmExpr) {
	if !w.arithOK(e) {
		w.a.unproven("arithmetic on a value the parser cannot see (bash evaluates it as an expression, which can run commands)", w.text(e))
	}
}

func (w *walker) arithOK(e syntax.ArithmExpr) bool {
	switch e := e.(type) {
	case *syntax.BinaryArithm:
		x, y := w.arithOK(e.X), w.arithOK(e.Y)
		return x && y
	case *syntax.UnaryArithm:
		return w.arithOK(e.X)
	case *syntax.ParenArithm:
		return w.arithOK(e.X)
	case *syntax.Word:
		w.word(e)
		return arithWord(e)
	}
	return false
}

func arithWord(wd *syntax.Word) bool {
	if v, ok := literal(wd); ok {
		return numberRE.MatchString(v)
	}
	if len(wd.Parts) != 1 {
		return false
	}
	p, ok := wd.Parts[0].(*syntax.ParamExp)
	if !ok || !p.Short || p.Param == nil {
		return false
	}
	switch p.Param.Value {
	case "#", "?", "$", "!":
		return true
	}
	return false
}

func (w *walker) test(e syntax.TestExpr) {
	switch e := e.(type) {
	case *syntax.BinaryTest:
		switch e.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, x := range []syntax.TestExpr{e.X, e.Y} {
				if wd, ok := x.(*syntax.Word); ok {
					w.arith(wd)
				} else {
					w.test(x)
				}
			}
			return
		}
		w.test(e.X)
		w.test(e.Y)
	case *syntax.UnaryTest:
		if e.Op == syntax.TsVarSet || e.Op == syntax.TsRefVar {
			if wd, ok := e.X.(*syntax.Word); ok {
				w.varName(wd)
			}
		}
		w.test(e.X)
	case *syntax.ParenTest:
		w.test(e.X)
	case *syntax.Word:
		w.word(e)
	}
}

// varName checks a word a builtin reads as a variable name: a subscript in
// it is evaluated as arithmetic.
func (w *walker) varName(wd *syntax.Word) {
	if v, ok := literal(wd); !ok || strings.Contains(v, "[") {
		w.a.unproven("a variable name the parser cannot see (bash evaluates a subscript in it)", w.text(wd))
	}
}

// literal is a word's value when it has no expansion at all: no parameter,
// command, arithmetic or process substitution, no glob or brace pattern.
func literal(wd *syntax.Word) (string, bool) {
	if wd == nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range wd.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[{") && hasUnescaped(p.Value, "*?[{") {
				return "", false
			}
			b.WriteString(unescape(p.Value, false))
		case *syntax.SglQuoted:
			if !p.Dollar || !strings.Contains(p.Value, `\`) {
				b.WriteString(p.Value)
				continue
			}
			s, _, err := expand.Format(&expand.Config{}, p.Value, nil)
			if err != nil {
				return "", false
			}
			s, _, _ = strings.Cut(s, "\x00")
			b.WriteString(s)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(l.Value, true))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// hasUnescaped reports whether s has one of chars not after a backslash.
func hasUnescaped(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte(chars, s[i]) >= 0 {
			return true
		}
	}
	return false
}

// unescape removes the backslashes the shell removes: every one outside
// quotes, and before $ ` " \ and newline inside double quotes.
func unescape(s string, dquoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			if n == '\n' {
				i++
				continue
			}
			if !dquoted || strings.IndexByte("$`\"\\", n) >= 0 {
				i++
				b.WriteByte(n)
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// commandName is the name a word runs: its literal value with the
// directory dropped. ok is false when the parser cannot know it.
func commandName(wd *syntax.Word) (string, bool) {
	v, ok := literal(wd)
	if !ok || v == "" || strings.HasPrefix(v, "=") {
		// =cmd is zsh's path expansion.
		return "", false
	}
	if strings.Contains(v, "/") {
		v = path.Base(v)
		if v == "/" || v == "." || v == ".." {
			return "", false
		}
	}
	return v, true
}

// resolve is the command lines a call runs, from the call itself through
// every wrapper; shell bodies (sh -c, eval, trap, alias) are parsed.
func (w *walker) resolve(args []*syntax.Word) []string {
	var out []string
	for range maxUnwrap {
		if len(args) == 0 {
			return out
		}
		name, ok := commandName(args[0])
		if !ok {
			w.a.unproven("dynamic command name", w.words(args))
			return out
		}
		var line strings.Builder
		line.WriteString(name)
		for _, a := range args[1:] {
			line.WriteString(" ")
			line.WriteString(w.literalText(a))
		}
		out = append(out, line.String())
		next, wrapped := w.unwrap(name, args[1:])
		if !wrapped {
			return out
		}
		args = next
	}
	w.a.unproven(fmt.Sprintf("more than %d nested wrappers", maxUnwrap), w.words(args))
	return out
}

func (w *walker) words(args []*syntax.Word) string {
	if len(args) == 0 {
		return ""
	}
	start, end := args[0].Pos().Offset(), args[len(args)-1].End().Offset()
	if start <= end && end <= uint(len(w.src)) {
		return w.src[start:end]
	}
	return w.text(args[0])
}

// opts describes a wrapper's options: short letters without and with a
// value, long names without and with a value.
type opts struct {
	short, shortArg string
	long, longArg   []string
	// number accepts -N (nice's -10).
	number bool
	// lookup letters make the wrapper run nothing (command -v).
	lookup string
}

var wrappers = map[string]opts{
	"command": {short: "p", lookup: "vV"},
	"builtin": {},
	"exec":    {short: "cl", shortArg: "a"},
	"nohup":   {},
	"time":    {short: "pvqa", shortArg: "fo", long: []string{"verbose", "portability", "quiet", "append"}, longArg: []string{"format", "output"}},
	"nice":    {shortArg: "n", longArg: []string{"adjustment"}, number: true},
	"timeout": {short: "v", shortArg: "sk", long: []string{"foreground", "preserve-status", "verbose"}, longArg: []string{"signal", "kill-after"}},
	"sudo": {short: "AbEHiknPSs", shortArg: "CDghpRrTUu",
		long:    []string{"askpass", "background", "preserve-env", "set-home", "non-interactive", "preserve-groups", "stdin", "shell"},
		longArg: []string{"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type", "command-timeout", "other-user", "user"},
		lookup:  "lvVeK"},
	"doas":    {short: "nsL", shortArg: "uC"},
	"stdbuf":  {shortArg: "ioe", longArg: []string{"input", "output", "error"}},
	"setsid":  {short: "cfw", long: []string{"ctty", "fork", "wait"}},
	"busybox": {},
	"xargs": {short: "0rtpxo", shortArg: "adEILnPs",
		long:    []string{"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty"},
		longArg: []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}},
	"env": {short: "i0v", shortArg: "uC", long: []string{"ignore-environment", "null", "debug"},
		longArg: []string{"unset", "chdir"}},
}

var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
	"ash": true, "yash": true, "posh": true, "fish": true}

// unwrap is the command a wrapper runs (wrapped false when name is no
// wrapper); shell bodies it finds are parsed and walked.
func (w *walker) unwrap(name string, args []*syntax.Word) ([]*syntax.Word, bool) {
	switch {
	case shells[name]:
		w.shellBody(name, args)
		return nil, false
	case name == "eval":
		w.evalBody("eval", args)
		return nil, false
	case name == "source" || name == ".":
		if len(args) > 0 && inputScript(args[0]) {
			w.a.unproven(name+" of its input", name+" "+w.words(args))
		}
		return nil, false
	case name == "trap":
		w.trap(args)
		return nil, false
	case name == "alias":
		for _, a := range args {
			if v, ok := literal(a); ok {
				if _, val, found := strings.Cut(v, "="); found {
					w.body("alias", val)
				}
				continue
			}
			w.a.unproven("alias of a dynamic string", w.text(a))
		}
		return nil, false
	case name == "read":
		w.nameOperands(name, args, "dinNptu", "a", "", true)
		return nil, false
	case name == "unset":
		w.nameOperands(name, args, "", "", "", true)
		return nil, false
	case name == "mapfile" || name == "readarray":
		w.nameOperands(name, args, "dnOsuc", "", "C", true)
		return nil, false
	case name == "wait":
		w.nameOperands(name, args, "", "p", "", false)
		return nil, false
	case name == "printf":
		w.nameOperands(name, args, "", "v", "", false)
		return nil, false
	case name == "getopts":
		if len(args) > 1 {
			w.varName(args[1])
		}
		return nil, false
	case name == "test" || name == "[":
		for i, a := range args {
			if v, _ := literal(a); i+1 < len(args) && (v == "-v" || v == "-R") {
				w.varName(args[i+1])
			}
		}
		return nil, false
	}
	o, ok := wrappers[name]
	if !ok {
		return nil, false
	}
	rest, lookup, ok := w.options(name, o, args)
	if !ok || lookup {
		return nil, false
	}
	switch name {
	case "env":
		for len(rest) > 0 {
			v, lit := literal(rest[0])
			if !lit {
				w.a.unproven("dynamic argument of env", w.text(rest[0]))
				return nil, false
			}
			if !strings.Contains(v, "=") {
				break
			}
			rest = rest[1:]
		}
	case "timeout":
		if len(rest) > 0 {
			rest = rest[1:] // the duration
		}
	case "sudo":
		if len(rest) == 0 && sudoShell(args) {
			w.a.unproven("a shell reading commands from its input", "sudo "+w.words(args))
		}
	case "busybox":
		if len(rest) > 0 {
			if v, _ := literal(rest[0]); strings.HasPrefix(v, "-") {
				return nil, false
			}
		}
	}
	return rest, true
}

func sudoShell(args []*syntax.Word) bool {
	for _, a := range args {
		v, _ := literal(a)
		if v == "--shell" || v == "--login" || (strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v, "si")) {
			return true
		}
	}
	return false
}

// options skips a wrapper's options. ok is false (and the command
// unproven) for an option the parser does not know or cannot read; lookup
// is true for an option that makes the wrapper run nothing.
func (w *walker) options(name string, o opts, args []*syntax.Word) (rest []*syntax.Word, lookup, ok bool) {
	bad := func(a *syntax.Word) ([]*syntax.Word, bool, bool) {
		w.a.unproven("unknown option of "+name, w.text(a))
		return nil, false, false
	}
	for i := 0; i < len(args); i++ {
		v, lit := literal(args[i])
		if !lit {
			if strings.HasPrefix(w.text(args[i]), "-") {
				return bad(args[i])
			}
			return args[i:], false, true
		}
		switch {
		case v == "--":
			return args[i+1:], false, true
		case v == "-" || !strings.HasPrefix(v, "-"):
			if name == "env" && v == "-" {
				continue
			}
			return args[i:], false, true
		case strings.HasPrefix(v, "--"):
			long, _, hasValue := strings.Cut(v[2:], "=")
			switch {
			case contains(o.long, long):
			case contains(o.longArg, long):
				if !hasValue {
					i++
				}
			default:
				return bad(args[i])
			}
		case o.number && isDigits(v[1:]):
		default:
			for j := 1; j < len(v); j++ {
				c := v[j]
				switch {
				case strings.IndexByte(o.lookup, c) >= 0:
					return nil, true, true
				case strings.IndexByte(o.short, c) >= 0:
				case strings.IndexByte(o.shortArg, c) >= 0:
					if j == len(v)-1 {
						i++
					}
					j = len(v)
				default:
					return bad(args[i])
				}
			}
		}
	}
	return nil, false, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shellBody parses the body of sh -c (bash, zsh... -c); a shell reading
// commands from its input is unproven; one running a script file is a
// command like any other.
func (w *walker) shellBody(name string, args []*syntax.Word) {
	hasC, stdin := false, false
	i := 0
options:
	for ; i < len(args); i++ {
		v, lit := literal(args[i])
		if !lit {
			if strings.HasPrefix(w.text(args[i]), "-") || strings.HasPrefix(w.text(args[i]), "+") {
				w.a.unproven("dynamic option of "+name, w.text(args[i]))
				return
			}
			break
		}
		switch {
		case v == "--" || v == "-":
			i++
			break options
		case strings.HasPrefix(v, "--"):
			if v == "--rcfile" || v == "--init-file" {
				i++
			}
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
			hasC = hasC || strings.ContainsRune(v, 'c')
			stdin = stdin || strings.ContainsRune(v, 's')
			if strings.ContainsAny(v, "oO") {
				i++
			}
		default:
			break options
		}
	}
	var operands []*syntax.Word
	if i < len(args) {
		operands = args[i:]
	}
	switch {
	case hasC && len(operands) > 0:
		w.shellString(name, operands[0])
	case hasC:
		w.a.unproven(name+" -c without a body", name+" "+w.words(args))
	case stdin || len(operands) == 0 || inputScript(operands[0]):
		w.a.unproven("a shell reading commands from its input", strings.TrimSpace(name+" "+w.words(args)))
	}
}

// inputScript reports whether a script operand is the command's input or
// a process substitution (bash <(echo ...), source /dev/stdin <<< ...):
// code written in the command the parser does not see as code.
func inputScript(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		if _, ok := p.(*syntax.ProcSubst); ok {
			return true
		}
	}
	v, ok := literal(wd)
	if !ok {
		return false
	}
	return v == "-" || v == "/dev/stdin" || strings.HasPrefix(v, "/dev/fd/") || strings.HasPrefix(v, "/proc/self/fd/") ||
		(strings.HasPrefix(v, "/proc/") && strings.Contains(v, "/fd/"))
}

func (w *walker) shellString(name string, body *syntax.Word) {
	v, ok := literal(body)
	if !ok {
		w.a.unproven(name+" -c with a dynamic body", w.text(body))
		return
	}
	w.body(name+" -c", v)
}

func (w *walker) evalBody(what string, args []*syntax.Word) {
	var parts []string
	for _, a := range args {
		v, ok := literal(a)
		if !ok {
			w.a.unproven(what+" of a dynamic string", w.text(a))
			return
		}
		parts = append(parts, v)
	}
	w.body(what, strings.Join(parts, " "))
}

func (w *walker) trap(args []*syntax.Word) {
	if len(args) > 0 {
		v, _ := literal(args[0])
		switch v {
		case "-l", "-p":
			return
		case "--":
			args = args[1:]
		}
	}
	if len(args) < 2 {
		return // trap, trap SIG: print or reset
	}
	v, ok := literal(args[0])
	if !ok {
		w.a.unproven("trap of a dynamic string", w.text(args[0]))
		return
	}
	if v != "-" {
		w.body("trap", v)
	}
}

// nameOperands checks the arguments a builtin reads as variable names:
// the operands and the values of the nameOpts options. An option in
// callback runs code (unproven); withArg options take a value.
func (w *walker) nameOperands(name string, args []*syntax.Word, withArg, nameOpts, callback string, operands bool) {
	for i := 0; i < len(args); i++ {
		v, lit := literal(args[i])
		if !lit {
			if operands || strings.HasPrefix(w.text(args[i]), "-") {
				w.varName(args[i])
			}
			continue
		}
		if v == "--" {
			if operands {
				for _, a := range args[i+1:] {
					w.varName(a)
				}
			}
			return
		}
		if len(v) < 2 || v[0] != '-' {
			if operands {
				w.varName(args[i])
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			c := v[j]
			if strings.IndexByte(callback, c) >= 0 {
				w.a.unproven(name+" -"+string(c)+" runs a string as code", w.words(args))
				return
			}
			if strings.IndexByte(withArg+nameOpts, c) < 0 {
				continue
			}
			isName := strings.IndexByte(nameOpts, c) >= 0
			if j < len(v)-1 {
				if isName {
					w.varName(&syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: v[j+1:]}}})
				}
			} else if i+1 < len(args) {
				i++
				if isName {
					w.varName(args[i])
				}
			}
			break
		}
	}
}

// body parses a shell string found in the command (sh -c, eval...) one
// level deeper.
func (w *walker) body(what, src string) {
	ctx := "in " + what
	if w.context != "" {
		ctx += ", " + w.context
	}
	w.a.parse(src, ctx, w.depth+1)
}
