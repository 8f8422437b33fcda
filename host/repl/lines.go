package repl

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/chzyer/readline"
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
	// HistoryFile keeps the prompt history across runs; "" keeps it in
	// memory only.
	HistoryFile string
	Stdin       io.ReadCloser
	Stdout      io.Writer
	Stderr      io.Writer
}

// NewTerminal reads lines from a terminal with line editing and history
// (github.com/chzyer/readline). Only lines passed to AddHistory enter the
// history, so approval answers stay out of it.
func NewTerminal(cfg TerminalConfig) (LineReader, error) {
	rl, err := readline.NewEx(&readline.Config{
		HistoryFile:            cfg.HistoryFile,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		Stdin:                  cfg.Stdin,
		Stdout:                 cfg.Stdout,
		Stderr:                 cfg.Stderr,
	})
	if err != nil {
		return nil, err
	}
	r := newReader(func(prompt string) (string, error) {
		rl.SetPrompt(prompt)
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			return "", ErrInterrupt
		}
		return line, err
	})
	r.setPrompt = func(p string) { rl.SetPrompt(p); rl.Refresh() }
	r.addHist = func(line string) { _ = rl.SaveHistory(line) }
	r.close = rl.Close
	return r, nil
}
