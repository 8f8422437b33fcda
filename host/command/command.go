// Package command holds the slash commands every front end runs the same
// way: the terminal (host/repl), the Agent Client Protocol server
// (host/frontend/acp) and the wire protocol server (host/frontend/wire).
// A line "/NAME ARGS" names one of them, built in (/compact, /clear,
// /model, /undo, /rewind, /init, /export, /plan) or custom
// (.kosong/commands/NAME.md); Run acts on the conversation and says what
// it did through the front end's Env, so /compact never reaches the model
// as a prompt. Commands about the terminal itself (/help, /last, /exit...)
// stay in host/repl.
package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
)

// Env is what a command acts on and where it reports.
type Env struct {
	Conv *conversation.Conversation
	// Say shows the user a message (one or more lines).
	Say func(text string)
	// Turn runs prompt as one turn of the conversation, the way the front
	// end runs the user's prompts (its rendering, its interrupts).
	Turn func(ctx context.Context, prompt string) error
	// ContextSizeChanged, when set, is told the new context window after
	// /model switched the model.
	ContextSizeChanged func(int64)
}

// workDir is the conversation's folder (the current directory when it
// has none).
func (e Env) workDir() string {
	if d := e.Conv.WorkDir(); d != "" {
		return d
	}
	d, _ := os.Getwd()
	return d
}

func (e Env) say(format string, args ...any) { e.Say(fmt.Sprintf(format, args...)) }

// Command is one slash command.
type Command struct {
	// Name is "/NAME".
	Name string
	// Args names the arguments for help ("[INSTRUCTION]"); "" for none.
	Args string
	// Description is one line for help and for the clients' command lists.
	Description string
	// Run runs the command with the rest of the line.
	Run func(ctx context.Context, e Env, arg string)
}

// Builtins are the built-in shared commands, in the order help lists
// them.
func Builtins() []Command {
	return []Command{
		{"/clear", "", "start a new session (the current one is kept on disk)", runClear},
		{"/compact", "[INSTRUCTION]", "summarise the history now, keeping what INSTRUCTION asks", runCompact},
		{"/model", "[ALIAS]", "show the model, or switch to a model alias (or PROVIDER/MODEL)", runModel},
		{"/plan", "[on|off]", "plan mode: explore with read-only tools and present a plan before changing anything (again: leave)", runPlan},
		{"/undo", "", "remove the last turn from the history and restore the files its file tools edited", runUndo},
		{"/rewind", "[N]", "remove the last N turns (default 1), restoring their files, newest first", runRewind},
		{"/init", "[WISHES]", "ask the model to write an AGENTS.md for this repository", runInit},
		{"/export", "[FILE]", "write the conversation as Markdown to FILE (default kosong-SESSION.md)", runExport},
	}
}

// List is the built-in commands then the custom commands of workDir
// (those named like a name in reserved, or a built-in, are left out).
func List(workDir string, reserved ...string) []Command {
	out := Builtins()
	return append(out, Custom(workDir, reserved...)...)
}

// Find is the command named name ("/NAME") among List(workDir, reserved...).
func Find(workDir, name string, reserved ...string) (Command, bool) {
	for _, c := range Builtins() {
		if c.Name == name {
			return c, true
		}
	}
	for _, c := range Custom(workDir, reserved...) {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Parse splits a line "/NAME ARGS" into "/NAME" and ARGS; ok is false for
// a line that is not a command: one of several lines, or whose first word
// is a path ("/etc/hosts is wrong").
func Parse(line string) (name, arg string, ok bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "/") || strings.Contains(line, "\n") {
		return "", "", false
	}
	word, arg, _ := strings.Cut(line, " ")
	if len(word) < 2 || strings.Contains(word[1:], "/") {
		return "", "", false
	}
	return word, strings.TrimSpace(arg), true
}

func runClear(ctx context.Context, e Env, _ string) {
	old := e.Conv.ID()
	if err := e.Conv.Clear(ctx); err != nil {
		e.say("error: %v", err)
		return
	}
	e.say("New session %s; the previous one is kept (run --resume %s).", e.Conv.ID(), old)
}

func runCompact(ctx context.Context, e Env, arg string) {
	usage, err := e.Conv.Compact(ctx, arg)
	switch {
	case errors.Is(err, loop.ErrNothingToCompact):
		e.say("%v", err)
	case errors.Is(err, conversation.ErrNotSaved):
		e.say("History compacted (%s tokens used for the summary).\nwarning: %v", Tokens(usage.Total()), err)
	case err != nil:
		e.say("error: compaction failed, the history is kept whole: %v", err)
	default:
		e.say("History compacted (%s tokens used for the summary).", Tokens(usage.Total()))
	}
}

// runModel shows the model, or switches to the model a configured alias,
// an alias's model or PROVIDER/MODEL names; a name the configuration does
// not know is refused (with a "did you mean") and nothing changes.
func runModel(ctx context.Context, e Env, arg string) {
	p := e.Conv.Provider()
	if p == nil {
		e.say("/model is not available in this run")
		return
	}
	if arg == "" {
		e.say("model: %s/%s%s (switch with /model ALIAS or /model PROVIDER/MODEL; `kosong-host models` lists the aliases)",
			p.Name(), p.Model(), windowText(e.Conv.MaxContextSize()))
		return
	}
	if err := e.Conv.SetModel(ctx, arg); err != nil {
		e.say("error: %v; the model stays %s/%s", err, p.Name(), p.Model())
		return
	}
	if e.ContextSizeChanged != nil {
		e.ContextSizeChanged(e.Conv.MaxContextSize())
	}
	p = e.Conv.Provider()
	e.say("model: %s/%s%s; the conversation carries on with it.", p.Name(), p.Model(), windowText(e.Conv.MaxContextSize()))
}

// windowText is " (context window 200k)", or "" when it is unknown.
func windowText(n int64) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (context window %s)", Tokens(n))
}

// Tokens is a token count for people: 950, 12.3k, 1.2M.
func Tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1000)) + "k"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1_000_000)) + "M"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }
