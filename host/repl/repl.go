// Package repl is the terminal front end of kosong-host: the interactive
// read-eval-print loop over an agent loop, the approval prompt, and the
// printers of a run's events (human text, or stream-json: one JSON object a
// line, see the README (stream-json)).
//
// Prompts are read from a LineReader: a terminal (line editing, history,
// bracketed paste) or a pipe. On a terminal approval questions are answered
// with single keys read by a KeyReader, which never takes typed-ahead or
// pasted text for an answer; through a pipe they are answered by the next
// piped lines, in order. A line starting with "/" is a slash command,
// handled here and never sent to the model (see commands.go). Runs that
// must not ask (one-shot -p runs) use the Unattended approval mode.
package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// Config configures a REPL.
type Config struct {
	Lines LineReader
	// Keys reads approval answers as single keys on a terminal; nil reads
	// them as lines from Lines.
	Keys    KeyReader
	Printer Printer
	// Color styles the approval questions.
	Color bool
	// Decider is the run's decider, for /yolo; nil disables /yolo.
	Decider *Decider
	// Commands are the run's side of the slash commands.
	Commands Commands
	// Prompts receives the approval questions (stdout in text mode, stderr
	// in stream-json mode, so stdout stays JSON).
	Prompts io.Writer
	// Interrupts delivers Ctrl-C presses made while a turn runs (SIGINT:
	// the terminal is not in raw mode then); each cancels the running turn.
	// At the prompt, Ctrl-C comes from Lines as ErrInterrupt and leaves.
	Interrupts <-chan os.Signal
	// AfterTurn runs after every turn, e.g. to save the history; its error
	// is reported, not fatal.
	AfterTurn func(history []providers.Message) error
	// Prompt is the input prompt; "" means "> ".
	Prompt string
	// Reload reloads the agent (/reload); nil: /reload is not offered.
	// It reports its outcome through the printer itself.
	Reload func(ctx context.Context)
}

// REPL is the interactive front end.
type REPL struct {
	cfg Config

	mu         sync.Mutex
	cancelTurn context.CancelFunc
	loop       *loop.Loop
	// saveHistory saves the history after each turn (Config.AfterTurn, or
	// the new session's after /clear).
	saveHistory func(history []providers.Message) error
}

// New returns a REPL.
func New(cfg Config) *REPL {
	if cfg.Prompt == "" {
		cfg.Prompt = "> "
	}
	if cfg.Prompts == nil {
		cfg.Prompts = io.Discard
	}
	return &REPL{cfg: cfg, saveHistory: cfg.AfterTurn}
}

// Asker is the approval.Asker of this REPL: it asks on Prompts and reads
// the answers from Lines; Ctrl-C at the approval prompt cancels the turn.
func (r *REPL) Asker() approval.Asker {
	style := func(_, s string) string { return s }
	if r.cfg.Color {
		style = func(code, s string) string { return code + s + ansiReset }
	}
	a := &asker{lines: r.cfg.Lines, keys: r.cfg.Keys, out: r.cfg.Prompts, printer: r.cfg.Printer, style: style,
		interrupt: r.Interrupt, now: time.Now}
	return a.ask
}

// Interrupt cancels the running turn, if any.
func (r *REPL) Interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancelTurn != nil {
		r.cancelTurn()
	}
}

// Run reads prompts and runs a turn for each until the input ends, the
// user enters exit, quit or /exit, presses Ctrl-C at the prompt, or ctx
// ends. Slash commands are run here. Turn errors are shown by the printer
// and do not end the REPL.
func (r *REPL) Run(ctx context.Context, l *loop.Loop) error {
	r.loop = l
	for {
		line, err := r.readPrompt(ctx)
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, ErrInterrupt):
			return nil
		case err != nil:
			return err
		}
		trimmed := strings.TrimSpace(line)
		switch trimmed {
		case "":
			continue
		case "exit", "quit":
			return nil
		}
		r.cfg.Lines.AddHistory(trimmed)
		if isCommand(trimmed) {
			if quit := r.command(ctx, trimmed); quit {
				return nil
			}
		} else {
			r.turn(ctx, r.loop, strings.TrimRight(line, " \t\r\n"))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// prompt is the input prompt, marked while yolo is on.
func (r *REPL) prompt() string {
	if r.cfg.Decider != nil && r.cfg.Decider.Mode() == Yolo {
		return "yolo " + r.cfg.Prompt
	}
	return r.cfg.Prompt
}

// readPrompt reads the next prompt. A SIGINT while waiting (stdin is not a
// terminal in raw mode, e.g. a pipe) counts as Ctrl-C at the prompt.
func (r *REPL) readPrompt(ctx context.Context) (string, error) {
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := r.watchInterrupts(func() { cancel(ErrInterrupt) })
	line, err := r.cfg.Lines.ReadLine(rctx, r.prompt())
	stop()
	if err != nil && errors.Is(context.Cause(rctx), ErrInterrupt) {
		return "", ErrInterrupt
	}
	return line, err
}

func (r *REPL) turn(ctx context.Context, l *loop.Loop, input string) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	r.cancelTurn = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cancelTurn = nil
		r.mu.Unlock()
	}()

	// Forget Ctrl-C presses made before the turn started.
	for drained := false; !drained; {
		select {
		case <-r.cfg.Interrupts:
		default:
			drained = true
		}
	}
	stop := r.watchInterrupts(cancel)
	_, _ = l.Turn(tctx, input) // the printer shows errors
	stop()
	r.afterTurn(l)
	r.tasksStatus()
}

// watchInterrupts calls f on the next interrupt, until stop is called;
// once stop returns, no interrupt is taken any more.
func (r *REPL) watchInterrupts(f func()) (stop func()) {
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-r.cfg.Interrupts:
			f()
		case <-quit:
		}
	}()
	return func() {
		close(quit)
		<-exited
	}
}

func (r *REPL) afterTurn(l *loop.Loop) {
	if r.saveHistory == nil {
		return
	}
	if err := r.saveHistory(l.History()); err != nil {
		fmt.Fprintf(r.cfg.Prompts, "warning: %v\n", err)
	}
}

// RunOnce runs one turn (a one-shot run) and returns the turn's error.
// afterTurn, if set, runs after the turn whatever its outcome, and its
// error is returned if the turn succeeded.
func RunOnce(ctx context.Context, l *loop.Loop, input string, afterTurn func([]providers.Message) error) (loop.TurnResult, error) {
	res, err := l.Turn(ctx, input)
	if afterTurn != nil {
		if serr := afterTurn(l.History()); serr != nil && err == nil {
			err = serr
		}
	}
	return res, err
}

// SetCommands sets the run's side of the slash commands (before Run).
func (r *REPL) SetCommands(c Commands) { r.cfg.Commands = c }

// SetDecider sets the decider /yolo switches (before Run).
func (r *REPL) SetDecider(d *Decider) { r.cfg.Decider = d }
