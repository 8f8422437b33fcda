package limits

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// OutputsDir is the folder, under a plugin's session state dir, where the
// full text of a cut result is saved, as OutputsDir/<tool call id>.txt.
const OutputsDir = "outputs"

// CutOutput applies ResultChars and ResultLineChars to the text parts of a
// result, all of them sharing one budget, in order. text reports a part's
// text and whether it is text (an image passes untouched); withText returns
// the part with its text replaced. Text parts after the budget ran out are
// left out. It returns the parts kept and whether anything was cut.
func CutOutput[P any](parts []P, text func(P) (string, bool), withText func(P, string) P) ([]P, bool) {
	last := -1
	for i, p := range parts {
		if s, ok := text(p); ok && s != "" {
			last = i
		}
	}
	cut, exhausted := false, false
	budget := ResultChars
	out := make([]P, 0, len(parts))
	for i, p := range parts {
		s, ok := text(p)
		if !ok {
			out = append(out, p)
			continue
		}
		if exhausted {
			continue
		}
		kept, c, e := Truncate(s, budget, ResultLineChars, i < last)
		cut, exhausted = cut || c, e
		budget -= utf8.RuneCountInString(kept)
		out = append(out, withText(p, kept))
	}
	return out, cut
}

// FullText joins the text parts of a result, as SaveFullOutput saves them.
func FullText[P any](parts []P, text func(P) (string, bool)) string {
	var b strings.Builder
	for _, p := range parts {
		if s, ok := text(p); ok {
			b.WriteString(s)
		}
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

// NoteCut saves the full text of a result whose output was cut
// (SaveFullOutput) and returns its message with the note that says so
// added: where the full text is, or why it could not be saved.
func NoteCut(message, stateDir, toolCallID, fullText string) string {
	path, err := SaveFullOutput(stateDir, toolCallID, fullText)
	note := fmt.Sprintf("The output was truncated (at most %d characters in all and %d a line; cuts are marked %s).",
		ResultChars, ResultLineChars, TruncatedMarker)
	if err != nil {
		note += " The full output could not be saved: " + err.Error() + "."
	} else {
		note += fmt.Sprintf(" The full output (%d characters) is saved in %s: read it in parts with ReadFile (line_offset, n_lines) or search it with Grep.",
			utf8.RuneCountInString(fullText), path)
	}
	if message == "" {
		return note
	}
	return message + "\n" + note
}

// SaveFullOutput writes text to stateDir/OutputsDir/<id>.txt and returns
// the path; the id is made a safe file name first.
func SaveFullOutput(stateDir, toolCallID, text string) (string, error) {
	if stateDir == "" {
		return "", fmt.Errorf("no session state directory")
	}
	dir := filepath.Join(stateDir, OutputsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, SafeFileName(toolCallID)+".txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// SafeFileName maps a tool call id to a file name: anything but letters,
// digits, '-', '_' and '.' becomes '_'.
func SafeFileName(id string) string {
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

// Size says n bytes for people: "12 MiB", "64 KiB", "100 bytes".
func Size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
