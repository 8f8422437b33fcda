package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reeflective/readline"
	"github.com/reeflective/readline/inputrc"
	"golang.org/x/term"
)

// ErrInterrupt is returned by ReadLine when the user pressed Ctrl-C at the
// prompt.
var ErrInterrupt = errors.New("interrupted")

// LineReader reads the user's lines: prompts and approval answers alike,
// from one source, one line at a time.
type LineReader interface {
	// ReadLine shows prompt and returns the next line, without its line
	// end. It returns io.EOF at the end of input, ErrInterrupt on Ctrl-C,
	// and ctx.Err() when ctx ends first; a read left pending that way
	// serves the next call, so no line is lost.
	ReadLine(ctx context.Context, prompt string) (string, error)
	// AddHistory records a line in the line-editing history, if any.
	AddHistory(line string)
	Close() error
}

// reader turns a blocking read function into a LineReader.
type reader struct {
	read      func(prompt string) (string, error)
	setPrompt func(prompt string)
	setDraft  func(text string)
	addHist   func(line string)
	close     func() error

	sem      chan struct{} // one ReadLine at a time
	mu       sync.Mutex
	inflight chan lineResult
}

type lineResult struct {
	line string
	err  error
}

func newReader(read func(string) (string, error)) *reader {
	return &reader{read: read, sem: make(chan struct{}, 1)}
}

func (r *reader) ReadLine(ctx context.Context, prompt string) (string, error) {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-r.sem }()

	r.mu.Lock()
	ch := r.inflight
	if ch == nil {
		ch = make(chan lineResult, 1)
		r.inflight = ch
		go func() {
			line, err := r.read(prompt)
			ch <- lineResult{line, err}
		}()
	} else if r.setPrompt != nil {
		r.setPrompt(prompt)
	}
	r.mu.Unlock()

	select {
	case res := <-ch:
		r.mu.Lock()
		r.inflight = nil
		r.mu.Unlock()
		return res.line, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// SetDraft makes the next prompt start with text in its input line (a
// terminal; elsewhere it does nothing).
func (r *reader) SetDraft(text string) {
	if r.setDraft != nil {
		r.setDraft(text)
	}
}

func (r *reader) AddHistory(line string) {
	if r.addHist != nil {
		r.addHist(line)
	}
}

func (r *reader) Close() error {
	if r.close != nil {
		return r.close()
	}
	return nil
}

// NewPipeReader reads lines from r, a pipe or a file: no prompt is shown,
// no line editing, "\r\n" line ends are accepted. A last line without a
// line end is returned before io.EOF.
func NewPipeReader(r io.Reader) LineReader {
	br := bufio.NewReader(r)
	return newReader(func(string) (string, error) {
		line, err := br.ReadString('\n')
		if err != nil && !(errors.Is(err, io.EOF) && line != "") {
			return "", err
		}
		return strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), nil
	})
}

// TerminalConfig configures NewTerminal.
type TerminalConfig struct {
	// HistoryFile keeps the prompt history across runs (one JSON object a
	// line); "" keeps it in memory only.
	HistoryFile string
	// Complete lists the completions of the word being typed, given the
	// input up to the cursor (REPL.Complete: slash commands, @paths); nil
	// completes nothing.
	Complete func(prefix string) []string
	// ShowLast is the line Ctrl-O submits (e.g. "/last"); "" leaves Ctrl-O
	// unbound.
	ShowLast string
}

// reserveRows makes sure there are n rows below the cursor, scrolling the
// screen up as far as needed when the cursor is near the bottom; written
// at the start of a line, it changes nothing else. The line editor draws
// the input line and then moves the cursor down a row and back up; on the
// bottom row the terminal ignores the move down but not the move up, so
// the cursor would land on the line above and the next key would
// overwrite it. n rows keep an input line of up to n rows right.
func reserveRows(n int) string {
	return strings.Repeat("\n", n) + fmt.Sprintf("\x1b[%dA", n)
}

// freshLine moves the cursor to the start of a line of its own when
// something left it in the middle of one, and changes nothing when it is
// at the start of a line already (as zsh does before its prompt): a row's
// worth of spaces wraps to the next row only from the middle of a line;
// at its start they fill the row and the carriage return brings the
// cursor back. "" when the width is not known.
func freshLine(width int) string {
	if width <= 0 {
		return ""
	}
	return strings.Repeat(" ", width) + "\r"
}

// rowsFor is how many rows the input line needs: three, or more for the
// text it starts with (a draft) on a terminal of width columns, at most
// height-1.
func rowsFor(prompt, draft string, width, height int) int {
	n := 3
	if width > 0 && draft != "" {
		rows := 0
		for _, l := range strings.Split(prompt+draft, "\n") {
			rows += max(1, (len([]rune(l))+2+width-1)/width)
		}
		n = max(n, rows+1)
	}
	if height > 1 {
		n = min(n, height-1)
	}
	return n
}

// NewTerminal reads the prompts from the terminal on stdin with
// github.com/reeflective/readline: Emacs keys, history (Up/Down, Ctrl-R
// incremental search), Tab completion and bracketed paste, so a paste is
// one message with its newlines kept. Enter submits; Ctrl-J inserts a
// newline. Bracketed paste stays on between prompts too, so a paste made
// while the agent works still arrives as one message. Approval answers are
// not read here (see NewKeys), so the history holds prompts only.
func NewTerminal(cfg TerminalConfig) (LineReader, error) {
	rl := readline.NewShell()
	_ = rl.Config.Set("enable-bracketed-paste", true)
	_ = rl.Config.Set("history-autosuggest", false)
	// The editor may ask the terminal where the cursor is (ESC [6n) each
	// time it draws the line, to keep its rows on the screen; but it reads
	// the answer itself and drops the keys that arrive with it, so keys
	// typed while it asks are lost (one in two over a slow link). It is
	// not asked: the rows the input line needs are made before the prompt
	// is drawn (reserveRows).
	_ = rl.Config.Set("cursor-position-probe", false)
	rl.Keymap.Register(map[string]func(){
		"kosong-insert-newline": func() { rl.Cursor().InsertAt('\n') },
		// Ctrl-C clears a line with text; on an empty line it is an
		// interrupt (ReadLine returns ErrInterrupt).
		"kosong-clear-or-interrupt": func() {
			if rl.Line().Len() > 0 {
				rl.Line().Set()
				rl.Cursor().Set(0)
				return
			}
			rl.Display.AcceptLine()
			rl.History.Accept(false, false, readline.ErrInterrupt)
		},
	})
	_ = rl.Config.Bind("emacs", inputrc.Unescape(`\C-c`), "kosong-clear-or-interrupt", false)
	// Ctrl-J. An Enter typed ahead stays CR (see keepCarriageReturn), so
	// it still submits. (Alt-Enter is not offered: the editor inserts an
	// ESC-prefixed key's escape as text instead of running its bind.)
	_ = rl.Config.Bind("emacs", inputrc.Unescape(`\C-j`), "kosong-insert-newline", false)
	if cfg.ShowLast != "" {
		rl.Keymap.Register(map[string]func(){
			"kosong-show-last": func() {
				rl.Line().Set([]rune(cfg.ShowLast)...)
				rl.Cursor().Set(rl.Line().Len())
				rl.Keys.Feed(false, '\r')
			},
		})
		_ = rl.Config.Bind("emacs", inputrc.Unescape(`\C-o`), "kosong-show-last", false)
	}
	if cfg.Complete != nil {
		rl.Completer = func(line []rune, cursor int) readline.Completions {
			return readline.CompleteValues(cfg.Complete(string(line[:cursor]))...)
		}
	}
	if cfg.HistoryFile != "" {
		if err := os.MkdirAll(filepath.Dir(cfg.HistoryFile), 0o700); err != nil {
			return nil, err
		}
		if f, err := os.OpenFile(cfg.HistoryFile, os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			f.Close()
		}
		hist, err := readline.NewHistoryFromFile(cfg.HistoryFile)
		if err != nil {
			return nil, fmt.Errorf("prompt history %s: %w", cfg.HistoryFile, err)
		}
		rl.History.Add("history", hist)
	}
	var mu sync.Mutex
	prompt, draft := "> ", ""
	rl.Prompt.Primary(func() string { mu.Lock(); defer mu.Unlock(); return prompt })
	rl.Prompt.Secondary(func() string { return "  " })
	r := newReader(func(p string) (string, error) {
		mu.Lock()
		prompt = p
		mu.Unlock()
		mu.Lock()
		d := draft
		draft = ""
		mu.Unlock()
		width, height, _ := term.GetSize(int(os.Stdout.Fd()))
		os.Stdout.WriteString(freshLine(width) + reserveRows(rowsFor(p, d, width, height)))
		if d != "" {
			// Typed into the editor as keys: Ctrl-J (a newline) inserts
			// a line; a tab would ask for completions.
			rl.Keys.Feed(false, []rune(strings.ReplaceAll(d, "\t", "    "))...)
		}
		line, err := rl.Readline()
		os.Stdout.WriteString(bracketedPasteOn) // Readline turns it off
		if errors.Is(err, readline.ErrInterrupt) {
			return "", ErrInterrupt
		}
		return line, err
	})
	r.setDraft = func(text string) {
		mu.Lock()
		draft = text
		mu.Unlock()
	}
	os.Stdout.WriteString(bracketedPasteOn)
	restore := keepCarriageReturn(int(os.Stdin.Fd()))
	r.close = func() error {
		os.Stdout.WriteString(bracketedPasteOff)
		restore()
		return nil
	}
	return r, nil
}
