//go:build linux

package main_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/session"
)

// exited waits for kosong-host to leave by itself, exit 0.
func (term *terminal) exited(why string) {
	term.t.Helper()
	select {
	case <-term.done:
	case <-time.After(expectWithin):
		term.t.Fatalf("kosong-host did not leave on %s; output:\n%s", why, term.Output())
	}
	var ee *exec.ExitError
	if err := term.cmd.Wait(); errors.As(err, &ee) {
		term.t.Fatalf("exit %d after %s; output:\n%s", ee.ExitCode(), why, term.Output())
	}
}

// History is the session's saved history, "role: text" a message.
func (term *terminal) History() []string {
	term.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(term.state, "kosong-host", "sessions", "*", session.HistoryFile))
	var msgs []string
	for _, p := range paths {
		h, err := session.LoadHistory(p)
		if err != nil {
			term.t.Fatal(err)
		}
		for _, m := range h {
			msgs = append(msgs, string(m.Role)+": "+m.Text())
		}
	}
	return msgs
}

// TestTerminalEscInterrupts: Esc interrupts a turn while a tool runs and
// while the answer streams; what finished stays, and the prompt is back.
func TestTerminalEscInterrupts(t *testing.T) {
	term := scriptedTerminal(t, `
turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "sleep 60"}}]
  - text: "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omega"
    delay: 300ms
`, "--yolo")
	term.Expect("/help for commands")
	term.Send("run the tool\r")
	term.Expect("• Shell")
	term.Expect("esc to interrupt")
	term.Send("\x1b")
	term.Expect("cancelled")
	term.Expect("Interrupted.")
	term.Expect("> ")
	term.Send("stream\r")
	term.Expect("beta")
	term.Send("\x1b")
	term.Expect("Interrupted.")
	term.Send("\x04") // Ctrl-D on an empty line
	term.exited("Ctrl-D")
	if out := term.Output(); strings.Contains(out, "omega") {
		t.Errorf("the turn went on after Esc:\n%s", out)
	}
}

// TestTerminalCtrlC: Ctrl-C at a prompt with text clears it; on an empty
// prompt it says how to leave, and a second one leaves.
func TestTerminalCtrlC(t *testing.T) {
	term := scriptedTerminal(t, "turns:\n  - text: Unused.\n")
	term.Expect("/help for commands")
	term.Expect("> ")
	term.Send("half a thought")
	term.Expect("half a thought")
	term.Send("\x03")
	term.ExpectScreen("an empty prompt", func(s *screen) bool {
		row, _ := s.Cursor()
		return s.Lines()[row] == ">"
	})
	term.Send("\x03")
	term.Expect("press Ctrl-C again or Ctrl-D to exit")
	term.Send("\x03")
	term.exited("a second Ctrl-C")
	if got := term.UserMessages(); len(got) != 0 {
		t.Errorf("the model was sent %q", got)
	}
}

// TestTerminalStreamsLive: a paragraph streamed a word every 200 ms shows
// its words as they come, before it ends; a spinner with the time taken
// shows while the model works and while a tool runs.
func TestTerminalStreamsLive(t *testing.T) {
	term := scriptedTerminal(t, `
turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "sleep 2"}}]
  - text: "one two three four five six seven eight nine ten eleven twelve."
    delay: 200ms
`, "--yolo")
	term.Expect("/help for commands")
	term.Send("go\r")
	term.Expect("Shell 1.") // the tool's spinner, after a second
	term.Expect("thinking")
	term.Expect("one two three")
	if out := term.Output(); strings.Contains(out, "twelve") {
		t.Fatalf("the words were shown only once the paragraph ended:\n%s", out)
	}
	term.Expect("twelve.")
	term.Expect("[2 steps")
	term.Exit()
}

// TestTerminalTypingDuringTurn: what is typed while a turn runs shows in
// the input line, never in the output; Enter queues it for after the
// turn; Ctrl-S steers it into the running turn, where the model sees it
// before its next request.
func TestTerminalTypingDuringTurn(t *testing.T) {
	term := scriptedTerminal(t, `
turns:
  - text: "Working."
    tool_calls: [{id: c1, name: Shell, arguments: {command: "sleep 4"}}]
  - text: "Steered answer."
  - text: "Queued answer."
`, "--yolo")
	term.Expect("/help for commands")
	term.Send("first task\r")
	term.Expect("• Shell")
	term.Send("queued line\r")
	term.Expect("queued: queued line")
	term.Send("steer this")
	term.Expect("> steer this")
	term.Send("\x13") // Ctrl-S
	term.Expect("(sent into the running turn)")
	term.Expect("Steered answer.")
	term.Expect("> queued line")
	term.Expect("Queued answer.")
	term.Exit()

	want := []string{
		"user: first task", "assistant: Working.", "tool: ", "user: " + loop.SteeredNote + "steer this", "assistant: Steered answer.",
		"user: queued line", "assistant: Queued answer.",
	}
	got := term.History()
	if len(got) != len(want) {
		t.Fatalf("history %q, want %q", got, want)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Fatalf("history %q, want %q", got, want)
		}
	}
	for _, l := range term.Screen().Lines() {
		if strings.Contains(l, "queued line") && !strings.Contains(l, "> queued line") {
			t.Errorf("the queued line was echoed into the output: %q\n%s", l, term.Screen())
		}
	}
}
