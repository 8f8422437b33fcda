package session

import (
	"testing"

	"github.com/kosong-host/kosong-host/providers"
)

func TestMarkdown(t *testing.T) {
	history := []providers.Message{
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("explain @a.go"),
			providers.TextPart("<file path=\"a.go\">\nx := \"```\"\n</file>"), {Type: providers.PartImage, ImageURL: "data:image/png;base64,AA=="}}},
		{Role: providers.RoleAssistant, Content: []providers.ContentPart{providers.TextPart("Let me look.")},
			ToolCalls: []providers.ToolCall{{ID: "c1", Name: "Shell", Arguments: `{"command":"ls"}`}}},
		{Role: providers.RoleTool, ToolCallID: "c1", Content: []providers.ContentPart{providers.TextPart("a.go\n")}},
		{Role: providers.RoleAssistant, Content: []providers.ContentPart{providers.TextPart("It is **Go**.")}},
		msg(providers.RoleUser, "<system>The user interrupted you.</system>"),
	}
	want := "# Session s1\n" +
		"\n## User\n\nexplain @a.go\n" +
		"\n````\n<file path=\"a.go\">\nx := \"```\"\n</file>\n````\n" +
		"\n*(an image)*\n" +
		"\n## Assistant\n\nLet me look.\n" +
		"\n**Tool call** `Shell` (c1)\n\n```json\n{\"command\":\"ls\"}\n```\n" +
		"\n**Tool result** (c1)\n\n```\na.go\n```\n" +
		"\n## Assistant\n\nIt is **Go**.\n" +
		"\n> <system>The user interrupted you.</system>\n"
	if got := Markdown("Session s1", history); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
