package repl

import (
	hostcommand "github.com/kosong-host/kosong-host/host/command"
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

// TestInitAsksForAgentsMD: /init sends the fixed prompt, with the user's
// wishes added.
func TestInitAsksForAgentsMD(t *testing.T) {
	h := runREPL(t, []scripted.Turn{{Text: "Written."}}, "/init keep it short\n", false)
	reqs := h.prov.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := reqs[0].History[len(reqs[0].History)-1].Text()
	if !strings.HasPrefix(got, hostcommand.InitPrompt) || !strings.HasSuffix(got, "The user adds: keep it short") {
		t.Fatalf("prompt %q", got)
	}
	if !strings.Contains(h.out.String(), "AGENTS.md is read into the system prompt of the next session") {
		t.Fatalf("output:\n%s", h.out.String())
	}
}
