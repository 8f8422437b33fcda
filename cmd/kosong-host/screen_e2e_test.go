//go:build unix

package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// promptUnderUsage: the cursor's row is the prompt with typed (and nothing
// else), and the row above it is a turn's usage line, intact.
func promptUnderUsage(typed string) func(s *screen) bool {
	return func(s *screen) bool {
		row, _ := s.Cursor()
		lines := s.Lines()
		return row > 0 && lines[row] == strings.TrimRight("> "+typed, " ") &&
			strings.HasPrefix(lines[row-1], "[1 step") && strings.HasSuffix(lines[row-1], "]")
	}
}

// TestTerminalPromptAtTheBottom: on a small terminal whose screen has
// filled, the prompt after each turn is on its own line under the usage
// line, and typing writes after the prompt, over nothing; also once the
// terminal is resized.
func TestTerminalPromptAtTheBottom(t *testing.T) {
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&script, "  - text: Answer number %d.\n", i)
	}
	work := writeFiles(t, map[string]string{"script.yaml": script.String()})
	term := startTerminalSize(t, 12, 80, work, []string{"NO_COLOR=1"}, "--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run",
		"--provider", "scripted", "--script", "script.yaml")
	term.Expect("/help for commands")
	for i := 1; i <= 5; i++ {
		term.Send(fmt.Sprintf("question %d\r", i))
		term.Expect(fmt.Sprintf("Answer number %d.", i))
		term.Expect("[1 step")
		term.ExpectScreen(fmt.Sprintf("the prompt under the usage line after turn %d", i), promptUnderUsage(""))
	}
	term.Send("typed")
	term.ExpectScreen("the typed text after the prompt, under the usage line", promptUnderUsage("typed"))
	term.Send("\x15") // Ctrl-U
	long := strings.Repeat("w", 100)
	term.Send(long) // two rows
	term.ExpectScreen("a line typed over two rows after the prompt, under the usage line", func(s *screen) bool {
		row, _ := s.Cursor()
		lines := s.Lines()
		return row > 1 && lines[row-1] == "> "+long[:78] && lines[row] == long[78:] && strings.HasPrefix(lines[row-2], "[1 step")
	})
	term.Send("\x15")

	// A smaller terminal, then a larger one: the prompt and what is typed
	// stay right, and so does the next turn's output.
	for _, size := range [][2]int{{10, 60}, {16, 100}} {
		term.Resize(size[0], size[1])
		term.Send("resized")
		term.ExpectScreen(fmt.Sprintf("the typed text after the prompt at %dx%d", size[1], size[0]), promptUnderUsage("resized"))
		term.Send("\x15")
	}
	term.Send("question 6\r")
	term.Expect("Answer number 6.")
	term.ExpectScreen("the prompt under the usage line after a turn on the resized terminal", promptUnderUsage(""))
	term.Exit()
}
