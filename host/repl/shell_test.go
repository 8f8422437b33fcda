package repl

import (
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/scripted"
)

// TestShellLineRefused: "!" alone says how to use it, and an agent with
// no Shell tool runs nothing; neither reaches the model.
func TestShellLineRefused(t *testing.T) {
	h := runREPL(t, []scripted.Turn{{Text: "unused"}}, "!\n!ls\n", false)
	out := h.out.String()
	for _, want := range []string{"usage: !COMMAND runs COMMAND with the Shell tool",
		"!COMMAND needs the Shell tool, and this agent has none; nothing was run"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := len(h.prov.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}
}
