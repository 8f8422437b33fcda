package repl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// A line starting with "!" runs the rest as a shell command with the
// agent's Shell tool, through the path a model's call takes (permission
// rules, PreToolUse hooks, the approval question), and shows its outcome.
// The command and its output go to the model with the next prompt.

// ShellTool is the tool "!" runs a command with.
const ShellTool = "Shell"

// MaxShellOutput bounds the output of a "!" command kept for the model
// (its end is kept).
const MaxShellOutput = 32 << 10

// shell runs command as the user's own Shell call.
func (r *REPL) shell(ctx context.Context, command string) {
	if command == "" {
		r.say("usage: !COMMAND runs COMMAND with the Shell tool; its output goes to the model with your next message")
		return
	}
	conv := r.local()
	if conv == nil {
		r.say("!COMMAND is not available in a session on a server; nothing was run")
		return
	}
	ts := conv.Toolset()
	if ts == nil {
		r.say("!COMMAND is not available in this run")
		return
	}
	if _, ok := ts.Find(ShellTool); !ok {
		r.say("!COMMAND needs the %s tool, and this agent has none; nothing was run", ShellTool)
		return
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	r.shellRuns++
	call := providers.ToolCall{ID: fmt.Sprintf("user-shell-%d", r.shellRuns), Name: ShellTool, Arguments: string(args)}

	tctx, end := r.interruptible(ctx)
	defer end()

	start := time.Now()
	r.cfg.Printer.Observe(loop.ToolCallStarted{Call: call})
	p := ts.Handle(tctx, call)
	<-p.Done()
	res := p.Result()
	r.cfg.Printer.Observe(loop.ToolCallFinished{Call: call, Result: res, Duration: time.Since(start), Cancelled: tctx.Err() != nil})

	out := res.OutputText()
	if len(out) > MaxShellOutput {
		out = "[... the first " + sizeText(int64(len(out)-MaxShellOutput)) + " left out]\n" + out[len(out)-MaxShellOutput:]
	}
	status := "ran"
	switch {
	case res.IsError() && res.Message != "":
		status = res.Message
	case res.IsError():
		status = "failed"
	}
	r.shellNotes = append(r.shellNotes, fmt.Sprintf("<shell command=%q>\nThe user ran this command themselves (%s).\n%s\n</shell>",
		command, strings.TrimSpace(status), strings.TrimRight(out, "\n")))
	r.say("(the command and its output go to the model with your next message)")
}

// content is the user message of input: the prompt, the files its
// mentions attach, and the "!" commands run since the last prompt.
func (r *REPL) content(input string) []providers.ContentPart {
	parts, notes := attach(r.workDir(), input, r.conv.TakesImages())
	for _, n := range notes {
		r.say("%s", n)
	}
	for _, s := range r.shellNotes {
		parts = append(parts, providers.TextPart(s))
	}
	r.shellNotes = nil
	return parts
}
