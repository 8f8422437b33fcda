package limits

import (
	"strings"
	"unicode/utf8"
)

// TruncatedMarker marks where text was cut.
const TruncatedMarker = "[...truncated]"

var markerRunes = utf8.RuneCountInString(TruncatedMarker)

// Truncate caps s to budget characters in all and maxLine characters a
// line, counting runes (never splitting a multi-byte character). A cut line
// or a cut end is marked with TruncatedMarker; markers and line breaks count
// towards the caps, so the result never exceeds them. more says that more
// text follows s under the same budget (so the end marker must always fit).
// It reports whether anything was cut, and whether the budget ran out.
// Invalid UTF-8 is replaced with U+FFFD first.
func Truncate(s string, budget, maxLine int, more bool) (out string, cut, exhausted bool) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if n := utf8.RuneCountInString(s); (n <= budget-markerRunes || n <= budget && !more) && !hasLongLine(s, maxLine) {
		return s, false, false
	}
	var b strings.Builder
	b.Grow(min(len(s), budget*4))
	for rest := s; rest != ""; {
		line, eol := rest, ""
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, eol, rest = rest[:i], "\n", rest[i+1:]
		} else {
			rest = ""
		}
		if strings.HasSuffix(line, "\r") {
			line, eol = line[:len(line)-1], "\r"+eol
		}
		if utf8.RuneCountInString(line) > maxLine {
			line = cutRunes(line, max(maxLine-markerRunes, 0)) + TruncatedMarker
			cut = true
		}
		piece := line + eol
		n := utf8.RuneCountInString(piece)
		// The very last piece may take the whole budget; any other must leave
		// room for the end marker in case what follows does not fit.
		if n <= budget-markerRunes || n <= budget && rest == "" && !more {
			b.WriteString(piece)
			budget -= n
			continue
		}
		b.WriteString(cutRunes(piece, max(budget-markerRunes, 0)))
		b.WriteString(TruncatedMarker)
		return b.String(), true, true
	}
	return b.String(), cut, false
}

// Cut caps s to maxChars characters, lines uncounted, marking a cut with
// TruncatedMarker; it reports whether anything was cut.
func Cut(s string, maxChars int) (string, bool) {
	out, cut, _ := Truncate(s, maxChars, maxChars, false)
	return out, cut
}

func hasLongLine(s string, maxLine int) bool {
	for s != "" {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		// A line of at most maxLine bytes has at most maxLine runes.
		if len(line) > maxLine && utf8.RuneCountInString(strings.TrimSuffix(line, "\r")) > maxLine {
			return true
		}
	}
	return false
}

// cutRunes returns the first n runes of s.
func cutRunes(s string, n int) string {
	i := 0
	for range n {
		if i >= len(s) {
			return s
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}
