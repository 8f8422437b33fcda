package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/scripted"
)

// TestExport: /export writes the conversation as Markdown and never
// overwrites a file; an empty conversation has nothing to export.
func TestExport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "talk.md")
	h := runREPL(t, []scripted.Turn{{Text: "Hi **there**."}}, "/export "+out+"\nhello\n/export "+out+"\n/export "+out+"\n", false)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "## User\n\nhello\n") || !strings.Contains(string(got), "## Assistant\n\nHi **there**.\n") {
		t.Fatalf("export:\n%s", got)
	}
	text := h.out.String()
	for _, want := range []string{"nothing to export yet: the conversation is empty", "The conversation is in " + out + " (2 messages).",
		"error: " + out + " exists; /export FILE writes a new file"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}
