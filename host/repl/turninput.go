package repl

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kosong-host/kosong-host/host/approval"
)

// turnWatcher reads the keys typed while a turn runs (a terminal; see
// typing_linux.go).
type turnWatcher interface {
	// watchTurn hands the keys typed to t until stop is called; nil when
	// the terminal cannot be read that way.
	watchTurn(t *typing) (stop func())
	// hold stops the reading while a question is asked.
	hold() (release func())
}

// liveInput is a printer that shows the input line of a running turn.
type liveInput interface {
	ShowInput(queued []string, text string)
	HideInput()
	Resume()
}

// drafter is a LineReader whose next prompt can start with text in it.
type drafter interface {
	SetDraft(text string)
}

// startTyping starts reading the keys typed while no prompt is read (a
// turn or a command runs): Esc and Ctrl-C interrupt the turn, Enter
// queues the line, Ctrl-S steers it into the running turn. The keys are
// never echoed; the input line shows them during a turn. Reading them
// here also keeps them from the line editor's cursor position query,
// which would lose keys arriving with its answer.
func (r *REPL) startTyping() {
	if r.typingStop != nil {
		return
	}
	w, ok := r.cfg.Keys.(turnWatcher)
	if !ok {
		return
	}
	live, _ := r.cfg.Printer.(liveInput)
	t := newTyping(typingHandlers{
		interrupt: r.Interrupt,
		steer: func(text string) bool {
			return r.conv != nil && r.conv.Steer(text)
		},
		show: func(queued []string, text string) {
			if live != nil && r.inTurn.Load() {
				live.ShowInput(queued, text)
			}
		},
		complete: r.Complete,
		showLast: func() {
			if s, ok := r.cfg.Printer.(interface{ ShowLastOutput() }); ok {
				s.ShowLastOutput()
			}
		},
		eof: func() {
			// Ctrl-D on an empty line: leave, once the turn (if one runs)
			// has ended.
			r.eofTyped.Store(true)
		},
	})
	if stop := w.watchTurn(t); stop != nil {
		r.typing, r.typingStop = t, stop
	}
}

// stopTyping stops reading the keys and returns what was queued and what
// is left on the input line.
func (r *REPL) stopTyping() (queued []string, text string) {
	if r.typingStop == nil {
		return nil, ""
	}
	r.typingStop()
	queued, text = r.typing.result()
	r.typing, r.typingStop = nil, nil
	return queued, text
}

// showTyping shows the input line while a turn runs; done takes it away.
func (r *REPL) showTyping() (done func()) {
	live, ok := r.cfg.Printer.(liveInput)
	if !ok || r.typing == nil {
		return func() {}
	}
	r.inTurn.Store(true)
	r.typing.turnStarted()
	queued, text := r.typing.result()
	live.ShowInput(queued, text)
	return func() {
		r.inTurn.Store(false)
		live.HideInput()
	}
}

// afterTurn keeps what could not go into the turn: steered text no step
// took starts the next prompt; after an interrupt, so do the lines queued
// before it (nothing queued runs by itself after Esc; a line entered
// after Esc is sent).
func (r *REPL) afterTurn(interrupted bool, unsteered []string) {
	draft := unsteered
	if interrupted && r.typing != nil {
		draft = append(draft, r.typing.takeQueuedBeforeInterrupt()...)
	}
	r.addDraft(draft...)
}

func (r *REPL) addDraft(texts ...string) {
	for _, t := range texts {
		if t == "" {
			continue
		}
		if r.draft != "" {
			r.draft += "\n"
		}
		r.draft += t
	}
}

// nextLine is the next line to run: a line queued while the last one ran
// (shown as if typed), else one read at the prompt, which starts with
// what was typed and not sent.
func (r *REPL) nextLine(ctx context.Context) (string, error) {
	if len(r.queue) == 0 {
		queued, text := r.stopTyping()
		r.queue = queued
		r.addDraft(text)
		if r.eofTyped.Swap(false) && len(r.queue) == 0 && r.draft == "" {
			return "", io.EOF
		}
	}
	if len(r.queue) > 0 {
		line := r.queue[0]
		r.queue = r.queue[1:]
		r.cfg.Printer.Pause()
		fmt.Fprintf(r.cfg.Prompts, "%s%s\n", r.prompt(), strings.ReplaceAll(line, "\n", "\n  "))
		return line, nil
	}
	if r.draft != "" {
		if d, ok := r.cfg.Lines.(drafter); ok {
			d.SetDraft(r.draft)
		}
		r.draft = ""
	}
	return r.readPrompt(ctx)
}

// holdTerminal stops the reading of keys typed during the turn while a
// question is asked; release gives the terminal back.
func (r *REPL) holdTerminal() (release func()) {
	var rel func()
	if w, ok := r.cfg.Keys.(turnWatcher); ok {
		rel = w.hold()
	}
	return func() {
		if rel != nil {
			rel()
		}
		if live, ok := r.cfg.Printer.(liveInput); ok {
			live.Resume()
		}
	}
}

// heldAsker asks with the terminal held; at a prompt (takeAsking) it
// asks with atPrompt.
func (r *REPL) heldAsker(ask, atPrompt approval.Asker) approval.Asker {
	return func(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
		prompt, release := r.takeAsking()
		defer release()
		if prompt {
			return atPrompt(ctx, req)
		}
		defer r.holdTerminal()()
		return ask(ctx, req)
	}
}

// heldQuestions asks with the terminal held.
type heldQuestions struct {
	r *REPL
	q approval.UserInput
}

func (h heldQuestions) Ask(ctx context.Context, req approval.QuestionRequest) (approval.Answers, error) {
	_, release := h.r.takeAsking()
	defer release()
	defer h.r.holdTerminal()()
	return h.q.Ask(ctx, req)
}

// heldLines reads lines with the terminal held: a line read while the
// keys typed during a turn are being read (an answer, a command's
// question) gets the keys.
type heldLines struct {
	LineReader
	r *REPL
}

func (h heldLines) ReadLine(ctx context.Context, prompt string) (string, error) {
	defer h.r.holdTerminal()()
	return h.LineReader.ReadLine(ctx, prompt)
}

// SetDraft passes the draft on.
func (h heldLines) SetDraft(text string) {
	if d, ok := h.LineReader.(drafter); ok {
		d.SetDraft(text)
	}
}
