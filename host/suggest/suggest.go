// Package suggest finds the known name closest to a mistyped one, for
// "did you mean ..." hints.
package suggest

import (
	"fmt"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Closest is the name of known closest to name (ignoring case), or "" when
// none is close: an edit distance of at most a third of the name's length
// (2 or 3; 1 for names of up to four characters; two neighbours swapped
// count as one), or a known name that differs only in case.
func Closest(name string, known []string) string {
	best, bestDist, bestExact := "", 0, 0
	lower := strings.ToLower(name)
	limit := min(max(len([]rune(name))/3, 2), 3)
	if len([]rune(name)) <= 4 {
		limit = 1
	}
	for _, k := range known {
		if k == name {
			return ""
		}
		d := levenshtein.ComputeDistance(lower, strings.ToLower(k))
		if d == 2 && swapped(lower, strings.ToLower(k)) {
			d = 1 // two neighbours swapped is one slip of the fingers
		}
		exact := levenshtein.ComputeDistance(name, k) // ties go to the closest in case
		if d <= limit && (best == "" || d < bestDist || d == bestDist && exact < bestExact) {
			best, bestDist, bestExact = k, d, exact
		}
	}
	return best
}

// Hint is " (did you mean NAME?)" for the name of known closest to name,
// or "".
func Hint(name string, known []string) string {
	if s := Closest(name, known); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", s)
	}
	return ""
}

// swapped reports whether b is a with two neighbouring characters swapped.
func swapped(a, b string) bool {
	x, y := []rune(a), []rune(b)
	if len(x) != len(y) {
		return false
	}
	for i := 0; i+1 < len(x); i++ {
		if x[i] != y[i] {
			return x[i] == y[i+1] && x[i+1] == y[i] && string(x[i+2:]) == string(y[i+2:])
		}
	}
	return false
}
