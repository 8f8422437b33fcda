package repl

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/charmbracelet/glamour"
	"github.com/muesli/termenv"
)

// markdown renders streamed assistant text block by block: text is held
// until a blank line outside a code fence closes a block, then the block
// is rendered with glamour (github.com/charmbracelet/glamour: headings,
// emphasis, lists, tables, code blocks highlighted by chroma).
type markdown struct {
	r   *glamour.TermRenderer
	buf strings.Builder
}

func newMarkdown(width int) *markdown {
	if width <= 0 {
		width = 100
	}
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle("dark"), glamour.WithColorProfile(termenv.ANSI256),
		glamour.WithWordWrap(min(width, 120)))
	if err != nil {
		return nil
	}
	return &markdown{r: r}
}

// write takes streamed text and returns what can be shown now.
func (m *markdown) write(s string) string {
	m.buf.WriteString(s)
	text := m.buf.String()
	cut := blockEnd(text)
	if cut <= 0 {
		return ""
	}
	m.buf.Reset()
	m.buf.WriteString(text[cut:])
	return m.render(text[:cut])
}

// flush renders what is held.
func (m *markdown) flush() string {
	text := m.buf.String()
	m.buf.Reset()
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return m.render(text)
}

func (m *markdown) render(text string) string {
	out, err := m.r.Render(text)
	if err != nil {
		return text
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		// glamour pads every line to the wrap width: drop the padding.
		if t := trailingBlanks.ReplaceAllString(l, ""); t != l {
			lines[i] = t
			if t != "" {
				lines[i] += ansiReset
			}
		}
	}
	// One blank line after each block, none before.
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n") + "\n\n"
}

// trailingBlanks are the spaces and colour codes that end a rendered line.
var trailingBlanks = regexp.MustCompile(`(?:\x1b\[[0-9;]*m| )+$`)

// blockEnd is the end of the last complete block of text: just after the
// last blank line that is outside a code fence; 0 if none.
func blockEnd(text string) int {
	end, inFence, pos := 0, false, 0
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		pos += len(l)
		if !strings.HasSuffix(l, "\n") {
			break // the line is not complete yet
		}
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			continue
		}
		if !inFence && t == "" && i > 0 {
			end = pos
		}
	}
	return end
}

// headerArgs are the arguments that summarise a call, per tool, in order;
// callSummary falls back to summaryArgs and then to the compact JSON.
var headerArgs = map[string][]string{
	"Shell":          {"command"},
	"ReadFile":       {"path"},
	"WriteFile":      {"path"},
	"StrReplaceFile": {"path"},
	"Glob":           {"pattern", "directory"},
	"Grep":           {"pattern", "path"},
	"FetchURL":       {"url"},
	"SearchWeb":      {"query"},
	"Think":          {"thought"},
	"Task":           {"description"},
}

// summaryArgs are argument names that summarise a call of any tool.
var summaryArgs = []string{"command", "path", "file_path", "pattern", "url", "query", "description", "text"}

// callSummary is the short form of a call's arguments for its header:
// `ls -la` for Shell, `README.md:1-40` for ReadFile, else the first known
// argument, else the compact JSON, on one line.
func callSummary(tool, arguments string) string {
	var args map[string]any
	if json.Unmarshal([]byte(arguments), &args) != nil {
		return oneLine(arguments, 100)
	}
	str := func(k string) string {
		if v, ok := args[k].(string); ok {
			return v
		}
		return ""
	}
	if tool == "ReadFile" && str("path") != "" {
		s := str("path")
		if from, ok := args["line_offset"].(float64); ok {
			s += fmt.Sprintf(":%d", int(from))
			if n, ok := args["n_lines"].(float64); ok {
				s += fmt.Sprintf("-%d", int(from)+int(n)-1)
			}
		} else if n, ok := args["n_lines"].(float64); ok {
			s += fmt.Sprintf(":1-%d", int(n))
		}
		return oneLine(s, 100)
	}
	var parts []string
	for _, k := range headerArgs[tool] {
		if v := str(k); v != "" {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		for _, k := range summaryArgs {
			if v := str(k); v != "" {
				parts = append(parts, v)
				break
			}
		}
	}
	if len(parts) > 0 {
		return oneLine(strings.Join(parts, "  "), 100)
	}
	if len(args) == 0 {
		return ""
	}
	compact, _ := json.Marshal(args)
	return oneLine(string(compact), 100)
}

// tailLines is the last n lines of s, and how many lines came before.
func tailLines(s string, n int) ([]string, int) {
	s = strings.TrimRight(s, "\n")
	if strings.TrimSpace(s) == "" {
		return nil, 0
	}
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return lines, 0
	}
	return lines[len(lines)-n:], len(lines) - n
}

// compactTokens is 950, 12.4k, 1.2M.
func compactTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1000), ".0") + "k"
	default:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1_000_000), ".0") + "M"
	}
}

// RenderMarkdown renders a whole Markdown text for a terminal of width
// columns (0: 100), e.g. the final answer of a one-shot run on a terminal.
func RenderMarkdown(text string, width int) string {
	m := newMarkdown(width)
	if m == nil {
		return text
	}
	m.buf.WriteString(text)
	return m.flush()
}
