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
func displayLines(blocks []approval.Display, style func(code, s string) string) []string {
	var out []string
	lastPath := ""
	for _, b := range blocks {
		switch b.Kind {
		case "diff":
			// A large edit comes as one block per hunk: old_start and
			// new_start number its lines, and note says what is left out.
			var d struct {
				Path     string `json:"path"`
				OldText  string `json:"old_text"`
				NewText  string `json:"new_text"`
				OldStart int    `json:"old_start"`
				NewStart int    `json:"new_start"`
				Note     string `json:"note"`
			}
			if json.Unmarshal(b.Data, &d) == nil {
				if d.Path != "" && d.Path != lastPath {
					out = append(out, style(ansiBold, d.Path))
				} else if d.Path != "" {
					out = append(out, style(ansiDim, "…"))
				}
				lastPath = d.Path
				lines := lineDiff(d.OldText, d.NewText)
				for i := range lines {
					switch {
					case lines[i].No == 0:
					case lines[i].Kind == '-':
						lines[i].No += max(d.OldStart-1, 0)
					default:
						lines[i].No += max(d.NewStart-1, 0)
					}
				}
				out = append(out, renderDiff(lines, style)...)
				if d.Note != "" {
					out = append(out, style(ansiDim, d.Note))
				}
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

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 2

// diffLine is one line of a diff: Kind is ' ' (context), '-' or '+'; No
// is its line number (in the old text for '-', else in the new); a Kind
// of '…' separates hunks, or says how many lines were left out.
type diffLine struct {
	Kind rune
	No   int
	Text string
}

// lineDiff lists the lines removed and added from old to new, in order,
// with diffContext unchanged lines around each change and a '…' line
// between separate hunks.
func lineDiff(old, new string) []diffLine {
	a, b := splitLines(old), splitLines(new)
	if len(a) > maxDiffInput || len(b) > maxDiffInput {
		return []diffLine{{Kind: '…', Text: fmt.Sprintf("(%d lines -> %d lines)", len(a), len(b))}}
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
	var all []diffLine
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			all = append(all, diffLine{' ', j + 1, b[j]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			all = append(all, diffLine{'-', i + 1, a[i]})
			i++
		default:
			all = append(all, diffLine{'+', j + 1, b[j]})
			j++
		}
	}
	// Keep the changes and the context around them.
	keep := make([]bool, len(all))
	for k, l := range all {
		if l.Kind != ' ' {
			for c := max(0, k-diffContext); c <= min(len(all)-1, k+diffContext); c++ {
				keep[c] = true
			}
		}
	}
	var out []diffLine
	skipped := false
	for k, l := range all {
		if !keep[k] {
			skipped = true
			continue
		}
		if skipped && len(out) > 0 {
			out = append(out, diffLine{Kind: '…', Text: "…"})
		}
		skipped = false
		out = append(out, l)
	}
	if len(out) > maxDiffLines {
		rest := len(out) - maxDiffLines
		out = append(out[:maxDiffLines], diffLine{Kind: '…', Text: fmt.Sprintf("… (%d more lines)", rest)})
	}
	return out
}

// renderDiff formats diff lines with their numbers, removed lines red and
// added ones green (style does nothing when colours are off).
func renderDiff(lines []diffLine, style func(code, s string) string) []string {
	width := 1
	for _, l := range lines {
		width = max(width, len(fmt.Sprint(l.No)))
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		switch l.Kind {
		case '…':
			out = append(out, style(ansiDim, l.Text))
		case '-':
			out = append(out, style(ansiRed, fmt.Sprintf("%*d - %s", width, l.No, l.Text)))
		case '+':
			out = append(out, style(ansiGreen, fmt.Sprintf("%*d + %s", width, l.No, l.Text)))
		default:
			out = append(out, style(ansiDim, fmt.Sprintf("%*d   ", width, l.No))+l.Text)
		}
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
