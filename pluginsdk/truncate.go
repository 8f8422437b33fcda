package pluginsdk

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// The output caps the SDK applies to every tool result before it goes on the
// wire, so that no tool can flood the model's context.
const (
	// MaxOutputChars caps a result's text output, all parts together.
	MaxOutputChars = 50_000
	// MaxOutputLineChars caps each line of a result's text output.
	MaxOutputLineChars = 2_000
	// TruncatedMarker marks where text was cut.
	TruncatedMarker = "[...truncated]"
)

// outputsDir is the folder under the session state dir where the full text
// of truncated outputs is kept.
const outputsDir = "outputs"

var markerRunes = utf8.RuneCountInString(TruncatedMarker)

// TruncateText caps s to maxChars characters in all and maxLine characters a
// line, counting runes (never splitting a multi-byte character). A cut line
// or a cut end is marked with TruncatedMarker; markers and line breaks count
// towards the caps, so the result never exceeds them. It reports whether
// anything was cut. Invalid UTF-8 is replaced with U+FFFD first.
func TruncateText(s string, maxChars, maxLine int) (string, bool) {
	out, cut, _ := truncateText(s, maxChars, maxLine, false)
	return out, cut
}

// truncateText is TruncateText with a flag saying more text follows s (so
// the end marker must always fit), and a result saying the budget ran out.
func truncateText(s string, budget, maxLine int, more bool) (out string, cut, exhausted bool) {
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

// capOutput applies the output caps to r's text parts (all of them sharing
// one budget) and makes every string of r valid UTF-8. When anything is cut, the full text is saved as
// outputs/<tool call id>.txt under stateDir (when there is one) and the
// message says so, naming the file. Images pass through untouched.
func capOutput(r Result, toolCallID, stateDir string) Result {
	last := -1
	for i, p := range r.Output {
		if !p.IsImage() && p.Text != "" {
			last = i
		}
	}
	cut, exhausted := false, false
	budget := MaxOutputChars
	parts := make([]Part, 0, len(r.Output))
	for i, p := range r.Output {
		if p.IsImage() {
			parts = append(parts, p)
			continue
		}
		if exhausted {
			continue
		}
		text, c, e := truncateText(p.Text, budget, MaxOutputLineChars, i < last)
		cut, exhausted = cut || c, e
		budget -= utf8.RuneCountInString(text)
		parts = append(parts, Part{Text: text})
	}
	orig := r.Output
	r.Output = parts
	// The wire carries strings as protobuf strings, which must be UTF-8.
	r.Message = strings.ToValidUTF8(r.Message, "\uFFFD")
	r.Brief = strings.ToValidUTF8(r.Brief, "\uFFFD")
	r.Feedback = strings.ToValidUTF8(r.Feedback, "\uFFFD")
	if !cut {
		return r
	}
	note := fmt.Sprintf("The output was truncated (at most %d characters in all and %d a line; cuts are marked %s).",
		MaxOutputChars, MaxOutputLineChars, TruncatedMarker)
	var full strings.Builder
	for _, p := range orig {
		full.WriteString(p.Text)
	}
	fullText := strings.ToValidUTF8(full.String(), "\uFFFD")
	if path, err := saveFullOutput(stateDir, toolCallID, fullText); err == nil {
		note += fmt.Sprintf(" The full output (%d characters) is saved in %s: read it in parts with ReadFile (line_offset, n_lines) or search it with Grep.",
			utf8.RuneCountInString(fullText), path)
	} else {
		note += " The full output could not be saved: " + err.Error() + "."
	}
	if r.Message != "" {
		r.Message += "\n" + note
	} else {
		r.Message = note
	}
	return r
}

// saveFullOutput writes text to stateDir/outputs/<id>.txt and returns the path.
func saveFullOutput(stateDir, toolCallID, text string) (string, error) {
	if stateDir == "" {
		return "", fmt.Errorf("no session state directory")
	}
	dir := filepath.Join(stateDir, outputsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, safeFileName(toolCallID)+".txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// safeFileName maps a tool call id to a file name: anything but letters,
// digits, '-', '_' and '.' becomes '_'.
func safeFileName(id string) string {
	if id == "" {
		return "unknown-call"
	}
	b := []byte(id)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	s := string(b)
	if strings.Trim(s, ".") == "" {
		return "call" + s
	}
	return s
}

// capResult applies the output caps to a tool's result, saving the full
// output under the session state dir learnt at Load.
func (s *server) capResult(toolCallID string, r Result) Result {
	s.mu.RLock()
	stateDir := s.session.StateDir
	s.mu.RUnlock()
	return capOutput(r, toolCallID, stateDir)
}
