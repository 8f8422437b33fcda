package file

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// requiredLiteral returns a literal every match of the regular expression
// contains, for a prefilter: lines without it cannot match. fold says the
// literal matches case-insensitively; it is then ASCII, lower-cased. An empty
// result means no usable literal.
func requiredLiteral(expr string) (lit []byte, fold bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, false
	}
	info := literalsOf(re.Simplify())
	var exact, folded []byte
	for _, c := range info.candidates {
		if !usableLiteral(c) {
			continue
		}
		b := []byte(string(c.runes))
		if c.fold {
			b = asciiLowerString(b)
			if len(b) > len(folded) {
				folded = b
			}
		} else if len(b) > len(exact) {
			exact = b
		}
	}
	// A case-sensitive literal is searched in place; a folded one needs a
	// lower-cased copy of the text, so it has to be clearly longer to win.
	if len(exact) > 0 && (len(exact) >= 3 || len(exact)*2 >= len(folded)) {
		return exact, false
	}
	if len(folded) > 0 {
		return folded, true
	}
	return exact, false
}

// run is a literal string of a regular expression.
type run struct {
	runes []rune
	fold  bool
}

// litInfo describes what a subexpression says about literals: exact, when
// it matches exactly one string (or, fold, that string in any case), and the
// literals any of its matches must contain.
type litInfo struct {
	exact      *run
	candidates []run
}

func literalsOf(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpLiteral:
		r := run{runes: re.Rune, fold: re.Flags&syntax.FoldCase != 0}
		return litInfo{exact: &r, candidates: []run{r}}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return litInfo{exact: &run{}}
	case syntax.OpCapture:
		return literalsOf(re.Sub[0])
	case syntax.OpPlus:
		return litInfo{candidates: literalsOf(re.Sub[0]).candidates}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return litInfo{candidates: literalsOf(re.Sub[0]).candidates}
		}
	case syntax.OpConcat:
		var out litInfo
		var cur *run // the run of adjacent exact literals being built
		allExact := true
		flush := func() {
			if cur != nil && len(cur.runes) > 0 {
				out.candidates = append(out.candidates, *cur)
			}
			cur = nil
		}
		for _, sub := range re.Sub {
			si := literalsOf(sub)
			if si.exact == nil {
				allExact = false
				flush()
				out.candidates = append(out.candidates, si.candidates...)
				continue
			}
			e := si.exact
			switch {
			case len(e.runes) == 0:
			case cur == nil:
				cur = &run{runes: append([]rune(nil), e.runes...), fold: e.fold}
			case len(cur.runes) == 0 || cur.fold == e.fold:
				cur.runes = append(cur.runes, e.runes...)
				cur.fold = cur.fold || e.fold
			default:
				allExact = false
				flush()
				cur = &run{runes: append([]rune(nil), e.runes...), fold: e.fold}
			}
		}
		if allExact {
			whole := run{}
			if cur != nil {
				whole = *cur
			}
			out.exact = &whole
		}
		flush()
		return out
	}
	return litInfo{}
}

// usableLiteral reports whether a prefilter may search for c: a folded
// literal must be ASCII (the text is lower-cased byte by byte), and no
// literal may hold U+FFFD, which the regexp also matches for invalid UTF-8.
func usableLiteral(c run) bool {
	if len(c.runes) == 0 {
		return false
	}
	for _, r := range c.runes {
		if r == utf8.RuneError || (c.fold && r >= utf8.RuneSelf) {
			return false
		}
	}
	return true
}

func asciiLowerString(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// foldAlternates returns the UTF-8 encodings of the non-ASCII characters
// that match a byte of the folded literal case-insensitively, such as the
// Kelvin sign for k: a text holding one of them is searched without the
// prefilter, which only folds ASCII.
func foldAlternates(lit []byte) [][]byte {
	var out [][]byte
	seen := map[rune]bool{}
	for _, c := range lit {
		r0 := rune(c)
		for r := unicode.SimpleFold(r0); r != r0; r = unicode.SimpleFold(r) {
			if r >= utf8.RuneSelf && !seen[r] {
				seen[r] = true
				out = append(out, []byte(string(r)))
			}
		}
	}
	return out
}
