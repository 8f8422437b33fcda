// Package repl is the terminal front end of kosong-host: the interactive
// read-eval-print loop over an agent loop, the approval prompt, and the
// printers of a run's events (human text, or stream-json: one JSON object a
// line, see docs/stream-json.md).
//
// Prompts are read from a LineReader: a terminal (line editing, history,
// bracketed paste) or a pipe. On a terminal approval questions are answered
// with single keys read by a KeyReader, which never takes typed-ahead or
// pasted text for an answer; through a pipe they are answered by the next
// piped lines, in order. On a terminal, while no prompt is read (a turn
// or a command runs), the keys typed are read by the REPL itself: they
// edit an input line shown under the turn's live output, Enter queues it,
// Ctrl-S steers it into the running turn (Conversation.Steer), Esc and
// Ctrl-C interrupt (turninput.go, typing.go). A line starting with "/" is a slash command,
// handled here and never sent to the model (see commands.go). Runs that
// must not ask (one-shot -p runs) use the unattended approval mode
// (approval.ModeUnattended). The REPL drives a Conversation: one of this
// process (host/conversation), whose turns, /clear, /model and /compact are
// its methods, or a session on a kosong-host server (host/remote), which
// runs the turns while the terminal shows them and answers its approvals.
package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// Conversation is what the terminal drives: a *conversation.Conversation
// of this process, or a session on a server (host/remote). The commands
// that act on the conversation itself (/compact, /model, /undo, "!"...)
// need one of this process; attached to a server they say so.
type Conversation interface {
	// TurnContent runs one turn with the user's message and returns when
	// it ends; ctx's end cancels it.
	TurnContent(ctx context.Context, content []providers.ContentPart) (loop.TurnResult, error)
	// Steer sends text into the running turn; false when none runs.
	Steer(text string) bool
	PlanMode() bool
	// WorkDir is the conversation's folder ("" for none known).
	WorkDir() string
	// TakesImages says whether the model takes images (@image.png).
	TakesImages() bool
}

// Config configures a REPL.
type Config struct {
	Lines LineReader
	// Keys reads approval answers as single keys on a terminal; nil reads
	// them as lines from Lines.
	Keys    KeyReader
	Printer Printer
	// Color styles the approval questions.
	Color bool
	// Approvals is the conversation's approval flow, for /yolo; nil
	// disables /yolo.
	Approvals *approval.Flow
	// Commands are the run's side of the slash commands.
	Commands Commands
	// Prompts receives the approval questions (stdout in text mode, stderr
	// in stream-json mode, so stdout stays JSON).
	Prompts io.Writer
	// Interrupts delivers SIGINT (Ctrl-C through a pipe or from kill);
	// while a turn runs each cancels it. On a terminal (Keys set) Esc and
	// Ctrl-C are read as keys while a turn runs (turninput.go). At the
	// prompt, Ctrl-C comes from Lines as ErrInterrupt: said once, twice
	// within 2 s leaves.
	Interrupts <-chan os.Signal
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
	conv       Conversation
	// promptCancel ends the prompt being read, if any (under mu); a
	// question asked meanwhile (a server's session, a turn another client
	// started) takes the prompt's place and holds asking until answered.
	promptCancel context.CancelCauseFunc
	asking       sync.Mutex

	// shellNotes are the "!" commands run since the last prompt, for the
	// next one (shell.go).
	shellNotes []string
	shellRuns  int

	// What was typed during a turn (turninput.go): lines queued to run
	// next, and the text the next prompt starts with.
	queue      []string
	draft      string
	typing     *typing
	typingStop func()
	inTurn     atomic.Bool
	eofTyped   atomic.Bool // Ctrl-D typed on an empty line while no prompt was read
}

// exitWithin: a second Ctrl-C at an empty prompt within this time leaves.
const exitWithin = 2 * time.Second

// New returns a REPL.
func New(cfg Config) *REPL {
	if cfg.Prompt == "" {
		cfg.Prompt = "> "
	}
	if cfg.Prompts == nil {
		cfg.Prompts = io.Discard
	}
	r := &REPL{cfg: cfg}
	if _, ok := cfg.Keys.(turnWatcher); ok {
		r.cfg.Lines = heldLines{LineReader: cfg.Lines, r: r}
	}
	return r
}

// Asker is the approval.Asker of this REPL: it asks on Prompts and reads
// the answers from Lines; Ctrl-C at the approval prompt cancels the turn.
func (r *REPL) Asker() approval.Asker {
	style := func(_, s string) string { return s }
	if r.cfg.Color {
		style = func(code, s string) string { return code + s + ansiReset }
	}
	a := &asker{lines: r.cfg.Lines, keys: r.cfg.Keys, out: r.cfg.Prompts, printer: r.cfg.Printer, style: style,
		interrupt: r.Interrupt}
	byLine := *a
	byLine.keys = nil
	return r.heldAsker(a.ask, byLine.ask)
}

// Interrupt cancels the running turn, if any.
func (r *REPL) Interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancelTurn != nil {
		r.cancelTurn()
	}
}

// Run reads prompts and runs a turn of conv for each until the input
// ends (Ctrl-D on an empty line), the user enters exit, quit or /exit,
// presses Ctrl-C twice at an empty prompt, or ctx ends. Slash commands
// are run here. Turn errors are shown by the printer and do not end the
// REPL.
func (r *REPL) Run(ctx context.Context, conv Conversation) error {
	r.conv = conv
	defer r.stopTyping()
	var interrupted time.Time // the last Ctrl-C at the prompt
	for {
		line, err := r.nextLine(ctx)
		if err == nil {
			r.startTyping()
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, errQuestion):
			// A question took the prompt: read it again once answered.
			r.asking.Lock()
			r.asking.Unlock() //nolint:staticcheck // waits for the question
			continue
		case errors.Is(err, ErrInterrupt):
			if !interrupted.IsZero() && time.Since(interrupted) < exitWithin {
				return nil
			}
			interrupted = time.Now()
			r.say("press Ctrl-C again or Ctrl-D to exit")
			continue
		case err != nil:
			return err
		}
		interrupted = time.Time{}
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
		} else if cmd, ok := strings.CutPrefix(trimmed, "!"); ok {
			r.shell(ctx, strings.TrimSpace(cmd))
		} else {
			r.turn(ctx, strings.TrimRight(line, " \t\r\n"))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// prompt is the input prompt, marked while plan mode or yolo is on.
func (r *REPL) prompt() string {
	p := r.cfg.Prompt
	if r.cfg.Approvals != nil && r.cfg.Approvals.Mode() == approval.ModeYolo {
		p = "yolo " + p
	}
	if r.conv != nil && r.conv.PlanMode() {
		p = "plan " + p
	}
	return p
}

// readPrompt reads the next prompt. A SIGINT while waiting (stdin is not a
// terminal in raw mode, e.g. a pipe) counts as Ctrl-C at the prompt.
func (r *REPL) readPrompt(ctx context.Context) (string, error) {
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.asking.Lock() // a question being asked is answered first
	r.mu.Lock()
	r.promptCancel = cancel
	r.mu.Unlock()
	r.asking.Unlock()
	defer func() {
		r.mu.Lock()
		r.promptCancel = nil
		r.mu.Unlock()
	}()
	stop := r.watchInterrupts(func() { cancel(ErrInterrupt) })
	line, err := r.cfg.Lines.ReadLine(rctx, r.prompt())
	stop()
	if err != nil {
		switch cause := context.Cause(rctx); {
		case errors.Is(cause, ErrInterrupt):
			return "", ErrInterrupt
		case errors.Is(cause, errQuestion):
			return "", errQuestion
		}
	}
	return line, err
}

// errQuestion ends a prompt read whose place a question took.
var errQuestion = errors.New("a question takes the prompt")

// takeAsking holds asking for a question. When a prompt is being read
// (the question comes from a turn this terminal did not start: another
// client's, on a server), the prompt gives way and atPrompt is true: the
// question is answered with a line, as the line editor already reads the
// terminal.
func (r *REPL) takeAsking() (atPrompt bool, release func()) {
	r.asking.Lock()
	r.mu.Lock()
	cancel := r.promptCancel
	r.mu.Unlock()
	if cancel != nil {
		cancel(errQuestion)
	}
	return cancel != nil, r.asking.Unlock
}

func (r *REPL) turn(ctx context.Context, input string) {
	tctx, end := r.interruptible(ctx)
	defer end()
	hide := r.showTyping()
	res, err := r.conv.TurnContent(tctx, r.content(input)) // the printer shows the turn's errors
	interrupted := tctx.Err() != nil && ctx.Err() == nil
	end()
	hide()
	r.afterTurn(interrupted, res.Unsteered)
	r.warnNotSaved(err)
	r.tasksStatus()
}

// interruptible starts work the user may interrupt (a turn, a "!"
// command): a child of ctx that the next Esc or Ctrl-C cancels (presses
// made before now are forgotten). end stops watching, forgets the work and
// cancels its context; it may be called more than once.
func (r *REPL) interruptible(ctx context.Context) (_ context.Context, end func()) {
	tctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.cancelTurn = cancel
	r.mu.Unlock()
	for drained := false; !drained; {
		select {
		case <-r.cfg.Interrupts:
		default:
			drained = true
		}
	}
	stop := r.watchInterrupts(cancel)
	var once sync.Once
	return tctx, func() {
		once.Do(func() {
			stop()
			r.mu.Lock()
			r.cancelTurn = nil
			r.mu.Unlock()
			cancel()
		})
	}
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

// local is the conversation of this process the REPL drives, or nil when
// it drives a session on a server.
func (r *REPL) local() *conversation.Conversation {
	c, _ := r.conv.(*conversation.Conversation)
	return c
}

// warnNotSaved reports a history that could not be saved; it is not fatal.
func (r *REPL) warnNotSaved(err error) {
	if errors.Is(err, conversation.ErrNotSaved) {
		fmt.Fprintf(r.cfg.Prompts, "warning: %v\n", err)
	}
}

// SetCommands sets the run's side of the slash commands (before Run).
func (r *REPL) SetCommands(c Commands) { r.cfg.Commands = c }

// SetApprovals sets the approval flow /yolo switches (before Run).
func (r *REPL) SetApprovals(f *approval.Flow) { r.cfg.Approvals = f }
