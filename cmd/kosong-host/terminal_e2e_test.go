//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/providers"
)

// terminal is kosong-host running on a pseudo-terminal, as a person runs it.
type terminal struct {
	t     *testing.T
	pty   *os.File
	cmd   *exec.Cmd
	state string // XDG_STATE_HOME: the sessions
	rows  int    // the terminal's size at the start
	cols  int

	mu      sync.Mutex
	out     bytes.Buffer
	resizes []resize // in the order made
	seen    int      // Expect looks past this offset
	change  chan struct{}
	done    chan struct{}
}

// startTerminal runs kosong-host ARGS in dir on a new pseudo-terminal.
func startTerminal(t *testing.T, dir string, env []string, args ...string) *terminal {
	t.Helper()
	return startTerminalSize(t, 40, 120, dir, env, args...)
}

// startTerminalSize runs kosong-host ARGS in dir on a new pseudo-terminal
// of rows x cols.
func startTerminalSize(t *testing.T, rows, cols int, dir string, env []string, args ...string) *terminal {
	t.Helper()
	cmd := exec.Command(kosongHost(t), args...)
	cmd.Dir = dir
	state := t.TempDir()
	cmd.Env = hostEnv("XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+t.TempDir(), "HOME="+t.TempDir(),
		"TERM=xterm-256color", "NO_COLOR=", "INPUTRC=/dev/null")
	cmd.Env = append(cmd.Env, env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, pty: f, cmd: cmd, state: state, rows: rows, cols: cols, change: make(chan struct{}),
		done: make(chan struct{})}
	go term.read()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-term.done
		_ = cmd.Wait()
		f.Close()
	})
	return term
}

func (term *terminal) read() {
	defer close(term.done)
	buf := make([]byte, 4096)
	query := []byte("\x1b[6n")
	scr := newScreen(term.rows, term.cols)
	fed, scanned := 0, 0
	for {
		n, err := term.pty.Read(buf)
		term.mu.Lock()
		term.out.Write(buf[:n])
		close(term.change)
		term.change = make(chan struct{})
		// Answer the line editor's cursor position queries (ESC [ 6 n), as
		// a terminal does: with where the cursor is on the screen then.
		var replies []string
		data := term.out.Bytes()
		for {
			j := bytes.Index(data[scanned:], query)
			if j < 0 {
				break
			}
			end := scanned + j + len(query)
			scr.Write(data[fed:end])
			fed, scanned = end, end
			row, col := scr.Cursor()
			replies = append(replies, fmt.Sprintf("\x1b[%d;%dR", row+1, col+1))
		}
		scr.Write(data[fed:])
		fed = len(data)
		scanned = max(scanned, len(data)-len(query)+1)
		term.mu.Unlock()
		for _, r := range replies {
			_, _ = io.WriteString(term.pty, r)
		}
		if err != nil {
			return
		}
	}
}

// Expect waits until the output past what was already expected, its
// control sequences and trailing blanks left out, contains s.
func (term *terminal) Expect(s string) {
	term.t.Helper()
	deadline := time.After(expectWithin)
	for {
		term.mu.Lock()
		out := term.text()
		i := strings.Index(out[term.seen:], s)
		if i >= 0 {
			term.seen += i + len(s)
		}
		change := term.change
		term.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-change:
		case <-term.done:
			term.mu.Lock()
			out := term.text()
			i := strings.Index(out[term.seen:], s)
			term.mu.Unlock()
			if i >= 0 {
				return
			}
			term.t.Fatalf("kosong-host ended before printing %q; output:\n%s", s, out)
		case <-deadline:
			term.t.Fatalf("no %q within %s; output:\n%s", s, expectWithin, out)
		}
	}
}

// resize is a change of the terminal's size, made when the output was at
// offset at.
type resize struct{ at, rows, cols int }

// Resize changes the terminal's size (the program gets SIGWINCH).
func (term *terminal) Resize(rows, cols int) {
	term.t.Helper()
	term.mu.Lock()
	term.resizes = append(term.resizes, resize{at: term.out.Len(), rows: rows, cols: cols})
	term.mu.Unlock()
	if err := pty.Setsize(term.pty, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)}); err != nil {
		term.t.Fatal(err)
	}
}

// Screen is what the terminal shows now.
func (term *terminal) Screen() *screen {
	term.mu.Lock()
	defer term.mu.Unlock()
	s := newScreen(term.rows, term.cols)
	data, at := term.out.Bytes(), 0
	for _, r := range term.resizes {
		s.Write(data[at:r.at])
		s.Resize(r.rows, r.cols)
		at = r.at
	}
	s.Write(data[at:])
	return s
}

// ExpectScreen waits until the screen satisfies ok (what describes it).
func (term *terminal) ExpectScreen(what string, ok func(s *screen) bool) {
	term.t.Helper()
	deadline := time.After(expectWithin)
	for {
		term.mu.Lock()
		change := term.change
		term.mu.Unlock()
		s := term.Screen()
		if ok(s) {
			return
		}
		select {
		case <-change:
		case <-term.done:
			if s := term.Screen(); !ok(s) {
				term.t.Fatalf("kosong-host ended; the screen never showed %s:\n%s", what, s)
			}
			return
		case <-deadline:
			term.t.Fatalf("the screen did not show %s within %s:\n%s", what, expectWithin, term.Screen())
		}
	}
}

// text is the output without control sequences; term.mu is held.
func (term *terminal) text() string {
	return ansiCode.ReplaceAllString(term.out.String(), "")
}

// Output is everything printed so far.
func (term *terminal) Output() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// Send types s.
func (term *terminal) Send(s string) {
	term.t.Helper()
	if _, err := io.WriteString(term.pty, s); err != nil {
		term.t.Fatal(err)
	}
}

// Paste pastes s as a terminal with bracketed paste does (line ends as \r).
func (term *terminal) Paste(s string) {
	term.Send("\x1b[200~" + strings.ReplaceAll(s, "\n", "\r") + "\x1b[201~")
}

// Exit leaves with /exit and waits for kosong-host to end, exit 0.
func (term *terminal) Exit() {
	term.t.Helper()
	term.Send("/exit\r")
	select {
	case <-term.done:
	case <-time.After(expectWithin):
		term.t.Fatalf("kosong-host did not leave on /exit; output:\n%s", term.Output())
	}
	err := term.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		term.t.Fatalf("exit %d; output:\n%s", ee.ExitCode(), term.Output())
	}
}

// UserMessages are the user messages of the session's saved history.
func (term *terminal) UserMessages() []string {
	term.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(term.state, "kosong-host", "sessions", "*", session.HistoryFile))
	var msgs []string
	for _, p := range paths {
		h, err := session.LoadHistory(p)
		if err != nil {
			term.t.Fatal(err)
		}
		for _, m := range h {
			if m.Role == providers.RoleUser {
				msgs = append(msgs, m.Text())
			}
		}
	}
	return msgs
}

func scriptedTerminal(t *testing.T, script string, extra ...string) *terminal {
	t.Helper()
	work := writeFiles(t, map[string]string{"script.yaml": script})
	args := append([]string{"--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run", "--provider", "scripted",
		"--script", "script.yaml"}, extra...)
	return startTerminal(t, work, nil, args...)
}

// TestTerminalPasteIsOneMessage: a bracketed paste of three lines is one
// message, its newlines kept; Ctrl-J adds a line to the message typed,
// also when typed ahead while the agent works.
func TestTerminalPasteIsOneMessage(t *testing.T) {
	term := scriptedTerminal(t, "turns:\n  - text: First answer.\n  - text: Second answer.\n")
	term.Expect("/help for commands")
	term.Paste("line one\nline two\nline three")
	term.Send("\r")
	term.Expect("First answer.")
	term.Send("typed one\ntyped two\r") // \n is Ctrl-J
	term.Expect("Second answer.")
	term.Exit()
	got := term.UserMessages()
	want := []string{"line one\nline two\nline three", "typed one\ntyped two"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("user messages %q, want %q\n%q", got, want, term.Output())
	}
}

// TestTerminalApprovalNotAnsweredByAccident: a key typed while the model
// streams and a paste while the question is up answer nothing; the
// question shows the command and the legend; a key press answers it.
func TestTerminalApprovalNotAnsweredByAccident(t *testing.T) {
	term := scriptedTerminal(t, `
turns:
  - text: "Let me run that command for you right now."
    delay: 200ms
    tool_calls: [{id: c1, name: Shell, arguments: {command: "echo ran > ran.txt"}}]
  - text: "Not run, as you asked."
`)
	work := term.cmd.Dir
	term.Expect("/help for commands")
	term.Send("run it\r")
	term.Expect("thinking") // the model is working
	term.Send("1")          // typed ahead, before the question
	term.Expect("> 1")      // into the input line, for the next prompt
	term.Expect("Shell wants approval to run command")
	term.Expect("echo ran > ran.txt")
	term.Expect("[1] approve once  [2] approve for this session  [3] reject  [4] reject with feedback")
	term.Paste("1 a stack trace follows:\n2\nat main.go:12")
	term.Expect("pasted text is not an answer")
	if fileExists(filepath.Join(work, "ran.txt")) {
		t.Fatal("the command ran on typed-ahead or pasted input")
	}
	term.Send("4")
	term.Expect("feedback: ")
	term.Send("do not run it\r")
	term.Expect("Not run, as you asked.")
	term.Send("\x15") // Ctrl-U: the 1 typed ahead starts the prompt
	term.Exit()
	if fileExists(filepath.Join(work, "ran.txt")) {
		t.Fatal("the rejected command ran")
	}
	if out := term.Output(); !strings.Contains(out, "Shell: run command rejected: do not run it (after ") {
		t.Errorf("the decision and the time it took are not shown:\n%s", out)
	}
}

// TestTerminalApprovalApproveOnce: "1" runs the command; its duration is
// shown apart from the approval's, and the last lines of its output
// under its header.
func TestTerminalApprovalApproveOnce(t *testing.T) {
	term := scriptedTerminal(t, `
turns:
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "printf 'l1\nl2\nl3\nl4\nl5\nl6\n'"}}]
  - text: "Ran."
`)
	term.Expect("/help for commands")
	term.Send("go\r")
	term.Expect("[4] reject with feedback")
	term.Send("1")
	term.Expect(", approval ")
	term.Expect("2 more lines (/last or Ctrl-O to see all)")
	term.Expect("l6")
	term.Expect("Ran.")
	term.Send("\x0f") // Ctrl-O
	term.Expect("l1")
	term.Exit()
}

// TestTerminalSlashCommands: /help, an unknown /foo and a typo are
// answered locally and never reach the model; Tab completes a command.
func TestTerminalSlashCommands(t *testing.T) {
	term := scriptedTerminal(t, "turns:\n  - text: The only answer.\n")
	term.Expect("/help for commands")
	term.Send("/help\r")
	term.Expect("/compact [INSTRUCTION]")
	term.Expect("Ctrl-J")
	term.Send("/foo\r")
	term.Expect("Unknown command /foo.")
	term.Expect("nothing was sent to the model")
	term.Send("/hlep\r")
	term.Expect("Did you mean /help?")
	term.Send("/yol\t\r")
	term.Expect("yolo on")
	term.Expect("yolo > ")
	term.Send("/yolo\r")
	term.Expect("yolo off")
	term.Send("/tools\r")
	term.Expect("NAME")
	term.Expect("Shell")
	term.Send("/model\r")
	term.Expect("model: scripted/")
	term.Send("hello\r")
	term.Expect("The only answer.")
	term.Exit()
	if got := term.UserMessages(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("the model was sent %q, want only hello", got)
	}
}

const markdownAnswer = "# Title\n\nSome **bold** words and `code`.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"

// TestTerminalMarkdown: Markdown is rendered on a terminal, left as it is
// when stdout is a pipe or NO_COLOR is set.
func TestTerminalMarkdown(t *testing.T) {
	script := "turns:\n  - text: " + strings.ReplaceAll(jsonString(markdownAnswer), "\n", "") + "\n"
	term := scriptedTerminal(t, script)
	term.Expect("/help for commands")
	term.Send("show\r")
	term.Expect("bold")
	term.Expect("[1 step")
	// The screen shows it rendered (it streams in raw, and is rendered
	// block by block as each is complete).
	shown := strings.Join(term.Screen().Lines(), "\n")
	term.Exit()
	if out := term.Output(); strings.Contains(shown, "**bold**") || strings.Contains(shown, "|---|") || !strings.Contains(out, "\x1b[") {
		t.Errorf("the Markdown was not rendered:\n%s", shown)
	}

	work := writeFiles(t, map[string]string{"script.yaml": script})
	r := runHostEnv(t, work, nil, "", "--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run",
		"--provider", "scripted", "--script", "script.yaml", "-p", "show")
	if r.code != 0 || r.stdout != markdownAnswer {
		t.Errorf("piped: exit %d, stdout %q, want the Markdown as it is", r.code, r.stdout)
	}

	oneShot := startTerminal(t, work, nil, "--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run",
		"--provider", "scripted", "--script", "script.yaml", "-p", "show")
	oneShot.Expect("bold")
	<-oneShot.done
	if out := oneShot.Output(); strings.Contains(out, "**bold**") || !strings.Contains(out, "\x1b[") {
		t.Errorf("one-shot on a terminal: the answer was not rendered:\n%q", out)
	}

	plain := startTerminal(t, work, []string{"NO_COLOR=1"}, "--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run",
		"--provider", "scripted", "--script", "script.yaml")
	plain.Expect("/help for commands")
	plain.Send("show\r")
	plain.Expect("**bold**")
	plain.Exit()
	if strings.Contains(plain.Output(), "\x1b[1m") {
		t.Errorf("NO_COLOR: bold escape codes in the output:\n%q", plain.Output())
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
