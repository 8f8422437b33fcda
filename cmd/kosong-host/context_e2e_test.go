//go:build unix

package main_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTerminalClearStartsAListedSession: after /clear the new session is
// listed by `sessions` with its first prompt, and the exit hint names it,
// not the session from before /clear.
func TestTerminalClearStartsAListedSession(t *testing.T) {
	term := scriptedTerminal(t, "turns:\n  - text: First answer.\n  - text: Second answer.\n")
	term.Expect("/help for commands")
	term.Send("before clear\r")
	term.Expect("First answer.")
	term.Send("/clear\r")
	term.Expect("New session ")
	term.Send("after clear\r")
	term.Expect("Second answer.")
	term.Exit()
	out := ansiCode.ReplaceAllString(term.Output(), "")
	i := strings.LastIndex(out, "kosong-host run --resume ")
	if i < 0 {
		t.Fatalf("no exit hint:\n%s", out)
	}
	hinted := strings.Fields(out[i+len("kosong-host run --resume "):])[0]

	r := runHostEnv(t, term.cmd.Dir, []string{"XDG_STATE_HOME=" + term.state}, "", "sessions", "--json")
	var rows []struct {
		ID          string `json:"id"`
		FirstPrompt string `json:"first_prompt"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 {
		t.Fatalf("sessions --json: %v %+v", err, r)
	}
	prompts := map[string]string{}
	for _, row := range rows {
		prompts[row.ID] = row.FirstPrompt
	}
	if len(rows) != 2 || prompts[hinted] != "after clear" {
		t.Fatalf("exit hint names %s; sessions listed %+v (want two, the hinted one's first prompt \"after clear\")", hinted, rows)
	}
}
