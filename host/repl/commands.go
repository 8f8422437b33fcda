package repl

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kosong-host/kosong-host/host/approval"
	hostcommand "github.com/kosong-host/kosong-host/host/command"
	"github.com/kosong-host/kosong-host/host/suggest"
)

// Commands is the run's side of the slash commands; a nil function makes
// its command say it is not available.
type Commands struct {
	// Tools lists the tools, loaded and skipped with their reasons.
	Tools func() string
	// Sessions lists the saved sessions.
	Sessions func() string
	// Tasks lists the running background tasks (/tasks, and a status line
	// after each turn while any run); nil where the agent has none.
	Tasks func(ctx context.Context) ([]BackgroundTask, error)
}

// command is one slash command.
type command struct {
	name, args, help string
	run              func(r *REPL, ctx context.Context, arg string) (quit bool)
}

var commands []command

func init() {
	commands = []command{{"/help", "", "show the commands and keys", (*REPL).cmdHelp}}
	for _, c := range hostcommand.Builtins() {
		commands = append(commands, command{c.Name, c.Args, c.Description, func(r *REPL, ctx context.Context, arg string) bool {
			r.runShared(ctx, c, arg)
			return false
		}})
	}
	commands = append(commands, []command{
		{"/tools", "", "list the tools: loaded, and skipped with the reason", (*REPL).cmdTools},
		{"/tasks", "", "list the running background tasks", (*REPL).cmdTasks},
		{"/reload", "", "reload the agent file: changed plugins restart, the tools change from the next step", (*REPL).cmdReload},
		{"/yolo", "", "approve every action without asking (again: ask again)", (*REPL).cmdYolo},
		{"/sessions", "", "list the saved sessions (resume one with run --resume ID)", (*REPL).cmdSessions},
		{"/last", "", "show the whole output of the last tool call (also Ctrl-O)", (*REPL).cmdLast},
		{"/exit", "", "leave (also exit, quit, Ctrl-D)", func(*REPL, context.Context, string) bool { return true }},
	}...)
}

// terminalNames are the commands of the terminal alone: custom commands
// do not shadow them.
func terminalNames() []string {
	var out []string
	for _, n := range CommandNames() {
		if _, ok := hostcommand.Find("", n); !ok {
			out = append(out, n)
		}
	}
	return out
}

// runShared runs a shared command (host/command) on the conversation of
// this process; attached to a server there is none to act on.
func (r *REPL) runShared(ctx context.Context, c hostcommand.Command, arg string) {
	if r.local() == nil {
		r.say("%s is not available in a session on a server; nothing was sent to the model", c.Name)
		return
	}
	c.Run(ctx, r.env(), arg)
}

// env is what the shared commands act on: the conversation, the
// terminal's output and its turns.
func (r *REPL) env() hostcommand.Env {
	return hostcommand.Env{Conv: r.local(),
		Say: func(text string) { r.say("%s", text) },
		Turn: func(ctx context.Context, prompt string) error {
			r.turn(ctx, prompt)
			return nil
		},
		ContextSizeChanged: func(n int64) {
			if w, ok := r.cfg.Printer.(interface{ SetMaxContextSize(int64) }); ok {
				w.SetMaxContextSize(n)
			}
		}}
}

// CommandNames lists the slash commands, for completion.
func CommandNames() []string {
	names := make([]string, 0, len(commands)+1)
	for _, c := range commands {
		names = append(names, c.name)
	}
	return append(names, "/quit")
}

// CompleteCommand lists the slash commands that start with prefix.
func CompleteCommand(prefix string) []string {
	if !strings.HasPrefix(prefix, "/") {
		return nil
	}
	var out []string
	for _, n := range CommandNames() {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// isCommand: a line whose first word is a slash and a word ("/help",
// "/model k2"); a path such as "/etc/hosts is wrong" is a prompt.
func isCommand(line string) bool {
	_, _, ok := hostcommand.Parse(line)
	return ok
}

// command runs a slash command; it reports whether the REPL is to end.
func (r *REPL) command(ctx context.Context, line string) bool {
	word, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	if word == "/quit" {
		return true
	}
	for _, c := range commands {
		if c.name == word {
			return c.run(r, ctx, arg)
		}
	}
	if c, ok := hostcommand.Find(r.workDir(), word, terminalNames()...); ok {
		r.runShared(ctx, c, arg)
		return false
	}
	msg := fmt.Sprintf("Unknown command %s.", word)
	if s := suggest.Closest(word, r.commandNames()); s != "" {
		msg += fmt.Sprintf(" Did you mean %s?", s)
	}
	r.say(msg + " Type /help for the commands; nothing was sent to the model.")
	return false
}

func (r *REPL) say(format string, args ...any) {
	r.cfg.Printer.Pause()
	fmt.Fprintf(r.cfg.Prompts, format+"\n", args...)
}

func (r *REPL) cmdHelp(context.Context, string) bool {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, c := range commands {
		name := c.name
		if c.args != "" {
			name += " " + c.args
		}
		fmt.Fprintf(&b, "  %-24s %s\n", name, c.help)
	}
	r.helpCustom(&b)
	b.WriteString(`Keys:
  Enter                    send the message
  Ctrl-J                   new line (a paste is one message, its newlines kept)
  Up, Down, Ctrl-R         history, history search
  Tab                      complete a command or an @path
  @PATH                    attach a file, a folder's listing or an image to the message
  !COMMAND                 run COMMAND with the Shell tool (asks as the model's calls do); its output goes with your next message
  Ctrl-O                   show the whole output of the last tool call
  Ctrl-C                   clear the line; on an empty line twice, leave
  Ctrl-D                   leave (on an empty line)
While a turn runs:
  Esc, Ctrl-C              interrupt the turn (what finished stays)
  Enter                    queue the line for after the turn
  Ctrl-S                   steer: send the line into the running turn
Approvals: press 1 approve once, 2 approve for this session, 3 reject (or Esc), 4 reject with feedback.
Typed-ahead and pasted text never answer an approval.`)
	r.say("%s", b.String())
	return false
}

func (r *REPL) cmdTools(context.Context, string) bool {
	if r.cfg.Commands.Tools == nil {
		r.say("/tools is not available in this run")
		return false
	}
	r.say("%s", strings.TrimRight(r.cfg.Commands.Tools(), "\n"))
	return false
}

func (r *REPL) cmdYolo(context.Context, string) bool {
	f := r.cfg.Approvals
	if f == nil || f.Base() != approval.ModeAsk {
		r.say("/yolo only switches a session that asks for approval")
		return false
	}
	on := f.Mode() != approval.ModeYolo
	if on && f.YoloForbidden() != nil {
		r.say("%v", f.YoloForbidden())
		return false
	}
	f.SetYolo(on)
	if on {
		r.say("yolo on: every action is approved without asking (/yolo again to ask)")
	} else {
		r.say("yolo off: actions that need approval are asked again")
	}
	return false
}

func (r *REPL) cmdSessions(context.Context, string) bool {
	if r.cfg.Commands.Sessions == nil {
		r.say("/sessions is not available in this run")
		return false
	}
	r.say("%s", strings.TrimRight(r.cfg.Commands.Sessions(), "\n"))
	return false
}

func (r *REPL) cmdLast(context.Context, string) bool {
	lp, ok := r.cfg.Printer.(interface{ LastOutput() (string, string) })
	if !ok {
		r.say("no tool output to show")
		return false
	}
	header, out := lp.LastOutput()
	if header == "" {
		r.say("no tool call yet")
		return false
	}
	r.cfg.Printer.Pause()
	fmt.Fprintln(r.cfg.Prompts, header)
	io.WriteString(r.cfg.Prompts, out)
	if !strings.HasSuffix(out, "\n") {
		fmt.Fprintln(r.cfg.Prompts)
	}
	return false
}

func (r *REPL) cmdReload(ctx context.Context, _ string) bool {
	if r.cfg.Reload == nil {
		r.say("/reload is not available in this run")
		return false
	}
	r.cfg.Reload(ctx)
	return false
}
