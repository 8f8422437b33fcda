//go:build unix

package main_test

import (
	"path/filepath"
	"testing"
)

// TestTerminalPlanMode: --plan starts in plan mode (the prompt says so), a
// WriteFile call is refused without asking, /plan leaves plan mode and
// /plan on enters it again.
func TestTerminalPlanMode(t *testing.T) {
	term := scriptedTerminal(t, `
turns:
  - tool_calls: [{id: w1, name: WriteFile, arguments: {path: "w.txt", content: "x"}}]
  - text: "Only planning."
`, "--plan")
	work := term.cmd.Dir
	term.Expect("plan > ")
	term.Send("write it\r")
	term.Expect("not available in plan mode")
	term.Expect("Only planning.")
	if fileExists(filepath.Join(work, "w.txt")) {
		t.Fatal("WriteFile wrote in plan mode")
	}
	term.Send("/plan\r")
	term.Expect("Plan mode off")
	term.Send("/plan on\r")
	term.Expect("Plan mode on")
	term.Expect("plan > ")
	term.Exit()
}
