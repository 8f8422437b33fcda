package repl

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kosong-host/kosong-host/host/approval"
)

// maxDiffLines caps the lines of a diff shown in an approval question;
// maxDiffInput caps the lines compared (beyond it only sizes are shown).
const (
	maxDiffLines = 40
	maxDiffInput = 1000
)

// displayLines renders an approval request's display blocks for the
// terminal: diffs as changed lines, briefs as text; other kinds are left
// out.
func displayLines(blocks []approval.Display) []string {
	var out []string
	for _, b := range blocks {
		switch b.Kind {
		case "diff":
			var d struct {
				Path    string `json:"path"`
				OldText string `json:"old_text"`
				NewText string `json:"new_text"`
			}
			if json.Unmarshal(b.Data, &d) == nil {
				out = append(out, lineDiff(d.OldText, d.NewText)...)
			}
		case "brief":
			var s string
			if json.Unmarshal(b.Data, &s) == nil && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// lineDiff lists the lines removed (-) and added (+) from old to new, in
// order, with "…" between separate hunks.
func lineDiff(old, new string) []string {
	a, b := splitLines(old), splitLines(new)
	if len(a) > maxDiffInput || len(b) > maxDiffInput {
		return []string{fmt.Sprintf("(%d lines -> %d lines)", len(a), len(b))}
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	gap := false
	emit := func(s string) {
		if gap && len(out) > 0 {
			out = append(out, "…")
		}
		gap = false
		out = append(out, s)
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			gap = true
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			emit("- " + a[i])
			i++
		default:
			emit("+ " + b[j])
			j++
		}
	}
	if len(out) > maxDiffLines {
		rest := len(out) - maxDiffLines
		out = append(out[:maxDiffLines], fmt.Sprintf("… (%d more lines)", rest))
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
