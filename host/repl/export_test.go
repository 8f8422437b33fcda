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
	h := runREPL(t, []scripted.Turn{{Text: "Hi **there**."}}, "/export "+out+"\nhello\n/export "+out+"\n/export "+out+"\n/export "+filepath.Join(out, "x.md")+"\n", false)
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "## User\n\nhello\n") || !strings.Contains(string(got), "## Assistant\n\nHi **there**.\n") {
		t.Fatalf("export:\n%s", got)
	}
	text := h.out.String()
	for _, want := range []string{"nothing to export yet: the conversation is empty", "The conversation is in " + out + " (2 messages).",
		"error: " + out + " exists; /export FILE writes a new file",
		"error: open " + filepath.Join(out, "x.md") + ": not a directory"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

// TestRewindRefused: /rewind takes a positive number, /undo no argument;
// a conversation that cannot change its history says so.
func TestRewindRefused(t *testing.T) {
	h := runREPL(t, []scripted.Turn{{Text: "unused"}}, "/rewind x\n/rewind 0\n/undo 2\n/undo\n", false)
	text := h.out.String()
	for _, want := range []string{`error: /rewind N takes a number of turns, 1 or more; "x" is not one`,
		`error: /rewind N takes a number of turns, 1 or more; "0" is not one`,
		"/undo takes no argument; /rewind N removes the last N turns",
		"error: this conversation cannot change its session or model"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}
