package session

import (
	"fmt"
	"strings"

	"github.com/kosong-host/kosong-host/providers"
)

// Markdown renders a conversation's history as a Markdown document: each
// user prompt and assistant answer under its own heading, the files
// attached to a prompt and the tool calls with their arguments and results
// in fenced blocks, the host's notes as quotes. title heads it.
func Markdown(title string, history []providers.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", title)
	for _, m := range history {
		switch m.Role {
		case providers.RoleUser:
			if p, ok := UserPrompt(m); ok {
				b.WriteString("\n## User\n\n" + strings.TrimSpace(p) + "\n")
				writeParts(&b, m.Content[1:])
				continue
			}
			for _, part := range m.Content {
				if part.Type == providers.PartText {
					b.WriteString("\n> " + strings.ReplaceAll(strings.TrimSpace(part.Text), "\n", "\n> ") + "\n")
				}
			}
		case providers.RoleAssistant:
			b.WriteString("\n## Assistant\n")
			if t := strings.TrimSpace(m.Text()); t != "" {
				b.WriteString("\n" + t + "\n")
			}
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "\n**Tool call** `%s` (%s)\n\n%s", c.Name, c.ID, fenced("json", c.Arguments))
			}
		case providers.RoleTool:
			fmt.Fprintf(&b, "\n**Tool result** (%s)\n", m.ToolCallID)
			writeParts(&b, m.Content)
		}
	}
	return b.String()
}

// writeParts writes content parts as fenced blocks, an image as a line.
func writeParts(b *strings.Builder, parts []providers.ContentPart) {
	for _, p := range parts {
		switch p.Type {
		case providers.PartText:
			if strings.TrimSpace(p.Text) != "" {
				b.WriteString("\n" + fenced("", p.Text))
			}
		case providers.PartImage:
			b.WriteString("\n*(an image)*\n")
		}
	}
}

// fenced is text in a fenced code block whose fence is longer than any
// run of backticks in it.
func fenced(lang, text string) string {
	longest, run := 0, 0
	for _, c := range text {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}
