package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/repl"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// Exit codes of run besides 0, 1 and 2.
const (
	// exitProvider: the model provider kept failing (retryable errors)
	// through every retry (EX_TEMPFAIL).
	exitProvider = 75
	// exitRefused: the turn ended but a tool call was refused (its
	// approval was rejected, by the user or because nobody could be asked).
	exitRefused = 3
	// exitInterrupted: the turn was cancelled (Ctrl-C, SIGTERM).
	exitInterrupted = 130
	// exitLimit: the run stopped at --max-turns, --max-tokens or
	// --max-budget-usd.
	exitLimit = 4
)

type runFlags struct {
	prompt       string
	outputFormat string
	provider     string
	model        string
	baseURL      string
	script       string
	config       string
	resume       string
	cont         bool
	wire         bool
	// resumeFromArg: the one positional argument was --resume's session id.
	resumeFromArg bool
	contextSize   int64
	maxSteps      int
	yolo          bool
	plan          bool
	interactive   bool
	streamIdle    time.Duration
	watchAgent    bool
	// noStdin: --no-stdin, stdin is never read as the prompt or context.
	noStdin bool
	// limits: --max-turns, --max-tokens, --max-budget-usd.
	limits loop.Limits
	// engine says where the turns run (temporal.go).
	engine engineFlags
}

func newRunCmd(g *globals) *cobra.Command {
	f, attach := &runFlags{}, &attachFlags{}
	cmd := &cobra.Command{
		Use:   "run [PROMPT]",
		Short: "Run the agent: an interactive session, or one turn with -p",
		Long: `Run the agent.

With a terminal on stdin (or --interactive), run an interactive session:
type a message, the agent works on it, type the next one. Enter sends,
Ctrl-J adds a line, a paste is one message; /help lists the slash commands
and keys. Esc (or Ctrl-C) interrupts the running turn; while it runs,
Enter queues what you type and Ctrl-S steers it into the turn. Ctrl-C
clears the prompt (twice on an empty one leaves); Ctrl-D, /exit, exit or
quit leave. Tools that need approval ask, answered by one
key: 1 approve once, 2 approve for this session, 3 reject, 4 reject with
feedback; keys typed ahead and pasted text never answer.

With a prompt (-p PROMPT or the argument), or with the prompt on stdin when
stdin is not a terminal, run one turn and exit. Piped stdin given with a
prompt is added to it as context (git diff | kosong-host run "review this").
In text mode stdout carries only the final answer; tool lines, usage and
warnings go to stderr. With --output-format stream-json the last event is
"result". Exit codes: 0 done, 1 the turn failed (or the repeat guard
stopped it), 2 usage or configuration error, 3 done but a tool call was refused (its approval was rejected), 4
stopped at --max-turns, --max-tokens or --max-budget-usd (finished tool results are kept), 75
the provider kept failing after retries, 130 interrupted
(the session is saved first: --resume continues it). Nobody can answer
approval requests then: they are rejected, telling the model that --yolo
allows them, unless --yolo is given.`,
		Args: runArgs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if attach.url == "" && (attach.session != "" || attach.tokenEnv != "") {
				return exitCode(2, errors.New("--session and --token-env name a server's session: give --server URL too"))
			}
			if attach.url != "" {
				return runAttached(cmd.Context(), cmd.Flags(), f, attach, args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			if f.engine.engine != "inprocess" {
				return runTemporal(cmd, f, promptArgs(f, args))
			}
			return runAgent(cmd, g, f, promptArgs(f, args))
		},
	}
	fl := cmd.Flags()
	addAttachFlags(cmd, attach, true)
	fl.StringVarP(&f.prompt, "prompt", "p", "", "run one turn with this prompt and exit")
	fl.StringVar(&f.outputFormat, "output-format", "text", "output format: text or stream-json (one JSON event a line, documented in docs/stream-json.md)")
	fl.StringVar(&f.provider, "provider", "", "model provider: "+strings.Join(registry.Known(), ", ")+
		" (default: the agent's model alias, else the configuration's default_model, else the first of kimi, openai, anthropic, google with an API key)")
	fl.StringVar(&f.model, "model", "", "a model alias of the configuration file, or a model name (overrides {PROVIDER}_MODEL_NAME)")
	fl.StringVar(&f.config, "config", "", "configuration file of providers and model aliases (default $XDG_CONFIG_HOME/kosong-host/config.yaml)")
	fl.StringVar(&f.baseURL, "base-url", "", "API base URL (overrides {PROVIDER}_BASE_URL)")
	fl.StringVar(&f.script, "script", "", "script file of the scripted provider")
	addSessionFlags(fl, f)
	addWireFlag(fl, f)
	fl.Int64Var(&f.contextSize, "max-context-size", 0, "the model's context window in tokens, to compact the history as it nears it (default: the model alias's max_context_size; unknown: never)")
	fl.IntVar(&f.maxSteps, "max-steps-per-turn", loop.DefaultMaxStepsPerTurn, "steps a turn may take before it is stopped")
	addLimitFlags(fl, &f.limits)
	fl.DurationVar(&f.streamIdle, "stream-idle-timeout", 0, "fail a model response (and retry it) when its stream sends nothing for this long (default: the configuration's stream_idle_timeout, else 5m)")
	fl.BoolVar(&f.yolo, "yolo", false, "approve every action without asking")
	fl.BoolVar(&f.plan, "plan", false, "start in plan mode: the model explores with read-only tools and presents a plan for approval before changing anything (/plan toggles it)")
	fl.BoolVar(&f.watchAgent, "watch-agent", false, "reload the agent when agent.yaml (its extend chain) or its lock file changes, checked before every step")
	fl.BoolVar(&f.noStdin, "no-stdin", false, "never read stdin as the prompt or as context of -p (otherwise piped stdin that sends nothing for 2s is left unread)")
	addEngineFlags(fl, &f.engine)
	fl.BoolVarP(&f.interactive, "interactive", "i", false, "run the interactive session even when stdin is not a terminal (prompts and approval answers are read line by line)")
	return cmd
}

// runMode is what a run does, decided from the flags and stdin.
type runMode struct {
	oneShot bool
	input   string // the one-shot prompt
}

// decideMode: a prompt (-p or the argument) runs one turn, with piped
// stdin added to it as context; else a terminal on stdin (or
// --interactive) runs the REPL; else stdin holds the prompt. Piped stdin
// beside a prompt is read only when it sends something or is closed
// within stdinWait (an open pipe that sends nothing, as from a script or a
// CI step, is left unread and said so on stderr); --no-stdin never reads it.
func decideMode(f *runFlags, args []string, stdin io.Reader, stdinTTY bool, stderr io.Writer) (runMode, error) {
	prompt := f.prompt
	if len(args) > 0 {
		if prompt != "" {
			return runMode{}, errors.New("give the prompt once: with -p or as the argument, not both")
		}
		prompt = strings.Join(args, " ")
	}
	switch {
	case prompt != "" && (stdinTTY || f.interactive || f.noStdin):
		return runMode{oneShot: true, input: prompt}, nil
	case prompt != "":
		piped, ok, err := (&pipedStdin{r: stdin}).read(stdinWait)
		if err != nil {
			return runMode{}, err
		}
		if !ok {
			fmt.Fprintf(stderr, "stdin sent nothing within %s and is still open: running without it (--no-stdin skips it)\n", stdinWait)
		}
		if piped != "" {
			prompt += "\n\n<stdin>\n" + piped + "\n</stdin>"
		}
		return runMode{oneShot: true, input: prompt}, nil
	case stdinTTY || f.interactive:
		return runMode{}, nil
	case f.noStdin:
		return runMode{}, errors.New("no prompt: give one with -p (--no-stdin leaves stdin unread)")
	}
	in := &pipedStdin{r: stdin}
	input, ok, err := in.read(stdinWait)
	if err == nil && !ok {
		fmt.Fprintf(stderr, "reading the prompt from stdin (nothing yet after %s; close it to send, or give the prompt with -p)\n", stdinWait)
		input, _, err = in.read(0)
	}
	if err != nil {
		return runMode{}, err
	}
	if input == "" {
		return runMode{}, errors.New("no prompt: give one with -p, on stdin, or run in a terminal for an interactive session")
	}
	return runMode{oneShot: true, input: input}, nil
}

// stdinWait is how long a run waits for piped stdin to send its first
// byte (or close) before going on without it.
var stdinWait = 2 * time.Second

// pipedStdin reads piped stdin with a bounded wait for its first byte.
type pipedStdin struct {
	r io.Reader
	// first is the first read, which may outlive a wait: the next read
	// takes its result instead of reading again.
	first chan stdinChunk
}

type stdinChunk struct {
	data []byte
	err  error
}

// read reads stdin to its end, trimmed, once it sends its first byte or
// closes within wait (0: no limit); ok is false when it did neither.
func (p *pipedStdin) read(wait time.Duration) (text string, ok bool, err error) {
	if p.first == nil {
		p.first = make(chan stdinChunk, 1)
		go func() {
			buf := make([]byte, 32*1024)
			n, err := p.r.Read(buf)
			p.first <- stdinChunk{buf[:n], err}
		}()
	}
	var first stdinChunk
	if wait > 0 {
		select {
		case first = <-p.first:
		case <-time.After(wait):
			return "", false, nil
		}
	} else {
		first = <-p.first
	}
	data := first.data
	if first.err == nil {
		rest, err := io.ReadAll(p.r)
		if err != nil {
			return "", true, fmt.Errorf("reading stdin: %w", err)
		}
		data = append(data, rest...)
	} else if first.err != io.EOF {
		return "", true, fmt.Errorf("reading stdin: %w", first.err)
	}
	return strings.TrimSpace(string(data)), true, nil
}

// turnExit maps the outcome of a one-shot turn to the exit status. The
// error itself has been shown by the printer, so it is only repeated on
// stderr when stdout carries stream-json.
func turnExit(res loop.TurnResult, err error, refused int, streamJSON bool) error {
	code := turnCode(res, err, refused)
	if code == 0 {
		return nil
	}
	if streamJSON && err != nil {
		return exitCode(code, err)
	}
	return exitCode(code, nil)
}

// turnCode is the exit status of a one-shot turn.
func turnCode(res loop.TurnResult, err error, refused int) int {
	code := 0
	switch {
	case err == nil && res.Reason.AtLimit():
		code = exitLimit
	case err == nil && (res.Reason == loop.StopRejected || refused > 0):
		code = exitRefused
	case err == nil && res.Reason == loop.StopToolCallRepeat:
		code = 1
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code = exitInterrupted
	case providers.IsRetryable(err):
		code = exitProvider
	default:
		code = 1
	}
	return code
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func runAgent(cmd *cobra.Command, g *globals, f *runFlags, args []string) error {
	if f.wire {
		return runWire(cmd, g, f)
	}
	stdin, stdout, stderr := cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	streamJSON := false
	switch f.outputFormat {
	case "text":
	case "stream-json":
		streamJSON = true
	default:
		return exitCode(2, fmt.Errorf("invalid --output-format %q: use text or stream-json", f.outputFormat))
	}
	if f.streamIdle < 0 {
		return exitCode(2, fmt.Errorf("invalid --stream-idle-timeout %s: it must be positive", f.streamIdle))
	}
	if f.maxSteps < 1 {
		return exitCode(2, fmt.Errorf("invalid --max-steps-per-turn %d: it must be at least 1", f.maxSteps))
	}
	if err := conversation.CheckLimits(f.limits); err != nil {
		return exitCode(2, err)
	}
	workDir, err := os.Getwd()
	if err != nil {
		return exitCode(2, err)
	}
	if !f.wire && firstRun(f, workDir, g.dotenvTrusted) {
		if in, ok := stdin.(*os.File); ok && isTerminal(in) && isTerminal(stderr) {
			if _, err := setup(in, stderr); err != nil {
				return exitCode(2, err)
			}
		}
	}
	if err := checkModelAndProvider(f); err != nil {
		return err
	}
	cfg, err := g.conversationConfig(f, workDir)
	if err != nil {
		return exitCode(2, err)
	}
	mode, err := decideMode(f, args, stdin, isTerminal(stdin), stderr)
	if err != nil {
		return exitCode(2, err)
	}
	if cfg.Resume, err = runResume(f, workDir, stdin, stderr); err != nil {
		return exitCode(2, err)
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM)
	defer stop()
	if mode.oneShot {
		// Ctrl-C cancels the turn and ends the run (exit 130).
		var cancel context.CancelFunc
		ctx, cancel = signal.NotifyContext(ctx, os.Interrupt)
		defer cancel()
	}
	fe, err := newFrontEnd(f, mode, streamJSON, stdin, stdout, stderr)
	if err != nil {
		return exitCode(2, err)
	}
	defer fe.close()
	refused := &refusals{Observer: fe.printer}
	cfg.Approval, cfg.Ask, cfg.Questions, cfg.Observer = fe.approval, fe.ask, fe.questions, refused
	// SessionStart fires after the banner, so stream-json starts with the
	// session event.
	cfg.DeferStart = true
	conv, err := openConversation(ctx, cfg, stderr)
	if err != nil {
		if ctx.Err() != nil {
			return exitCode(exitInterrupted, ctx.Err()) // Ctrl-C while the plugins started
		}
		return exitCode(2, setupHint(pluginHint(err, cfg.Load.PluginDirs)))
	}
	defer conv.Close()
	provider, a := conv.Provider(), conv.Agent()
	if provider.Name() == registry.Scripted && !streamJSON {
		fmt.Fprintf(stderr, "scripted provider: replaying the model turns of %s; no model is called\n", strings.TrimPrefix(provider.Model(), "script:"))
	}
	if streamJSON || !mode.oneShot {
		sess := conv.Session()
		fe.printer.Start(repl.Info{SessionID: sess.ID, StateDir: sess.Dir, Agent: a.Spec.Name, Provider: provider.Name(),
			Model: provider.Model(), Tools: conv.Toolset().Names(), WorkDir: workDir, Approval: conv.Approvals().Mode().String(),
			MaxContextSize: conv.MaxContextSize()})
		printAgentSource(stderr, streamJSON, a)
		if history := conv.History(); len(history) > 0 && !streamJSON {
			printRecap(stdout, sess.ID, history)
		}
	}
	conv.Start(ctx)
	if mode.oneShot {
		return oneShot(ctx, conv, mode.input, refused, fe, stdout, streamJSON)
	}
	fe.reload = func(ctx context.Context) { _, _ = conv.ReloadAgent(ctx) }
	fe.repl.SetApprovals(conv.Approvals())
	fe.repl.SetCommands(slashCommands(conv))
	err = fe.repl.Run(ctx, conv)
	printResumeHint(stderr, conv.ID())
	if err != nil && !errors.Is(err, context.Canceled) {
		return exitCode(1, err)
	}
	if refused.atLimit.Load() {
		return exitCode(exitLimit, nil)
	}
	return nil
}

// frontEnd is how a run talks to the user.
type frontEnd struct {
	printer repl.Printer
	repl    *repl.REPL // nil in one-shot runs
	// approval is the approval mode; ask asks the user (nil where no one
	// can be asked).
	approval approval.Mode
	ask      approval.Asker
	// questions answers AskUserQuestion; nil where no one can answer.
	questions approval.UserInput
	close     func()
	// reload reloads the agent (/reload), once it is loaded.
	reload func(ctx context.Context)
}

// newFrontEnd builds the printer, the approval mode and, for an
// interactive session, the REPL. Approval questions go to stdout in text
// mode and to stderr with stream-json, so stdout stays JSON.
func newFrontEnd(f *runFlags, mode runMode, streamJSON bool, stdin io.Reader, stdout, stderr io.Writer) (*frontEnd, error) {
	fe := &frontEnd{close: func() {}, approval: approval.ModeUnattended}
	prompts := stdout
	color := isTerminal(stdout) && os.Getenv("NO_COLOR") == ""
	switch {
	case streamJSON:
		fe.printer, prompts = repl.NewJSONPrinter(stdout), stderr
	case mode.oneShot:
		// stdout carries only the final answer.
		fe.printer = repl.NewTextPrinter(stderr, stderr, repl.TextOptions{TTY: isTerminal(stderr), OneShot: true,
			Color: isTerminal(stderr) && os.Getenv("NO_COLOR") == ""})
	default:
		fe.printer = repl.NewTextPrinter(stdout, stderr, repl.TextOptions{TTY: isTerminal(stdout), Color: color,
			Markdown: color, Width: terminalWidth(stdout), Columns: func() int { return terminalWidth(stdout) }})
	}
	if !mode.oneShot {
		lines, err := lineReader(stdin, isTerminal(stdin), func(line string) []string { return fe.repl.Complete(line) })
		if err != nil {
			return nil, err
		}
		var keys repl.KeyReader
		if in, ok := stdin.(*os.File); ok && isTerminal(stdin) {
			keys = repl.NewKeys(in, prompts)
		}
		// SIGINT cancels the running turn (on a terminal the REPL reads
		// Ctrl-C and Esc as keys while a turn runs; at the prompt
		// readline reports Ctrl-C).
		interrupts := make(chan os.Signal, 1)
		signal.Notify(interrupts, os.Interrupt)
		fe.close = func() { signal.Stop(interrupts); lines.Close() }
		fe.repl = repl.New(repl.Config{Lines: lines, Keys: keys, Printer: fe.printer, Prompts: prompts, Color: color,
			Interrupts: interrupts,
			Reload: func(ctx context.Context) {
				if fe.reload != nil {
					fe.reload(ctx)
				}
			}})
		fe.approval, fe.ask = approval.ModeAsk, fe.repl.Asker()
		fe.questions = fe.repl.Questions()
	}
	if f.yolo {
		fe.approval = approval.ModeYolo
	}
	return fe, nil
}

// lineReader reads the REPL's lines: with line editing and a prompt
// history kept beside the sessions on a terminal, else line by line.
func lineReader(stdin io.Reader, tty bool, complete func(string) []string) (repl.LineReader, error) {
	if _, ok := stdin.(*os.File); !tty || !ok {
		return repl.NewPipeReader(stdin), nil
	}
	root, err := session.Root(os.Getenv)
	if err != nil {
		return nil, err
	}
	return repl.NewTerminal(repl.TerminalConfig{
		HistoryFile: filepath.Join(filepath.Dir(root), "prompt_history.jsonl"),
		Complete:    complete,
		ShowLast:    "/last",
	})
}

// addLimitFlags adds the run's limits: --max-turns, --max-tokens,
// --max-budget-usd (docs/observability.md).
func addLimitFlags(fl *pflag.FlagSet, l *loop.Limits) {
	fl.IntVar(&l.MaxTurns, "max-turns", 0, "stop the run after this many model responses (turns, as Claude Code counts them), keeping the finished tool results; exit 4 (0: no limit)")
	fl.Int64Var(&l.MaxTokens, "max-tokens", 0, "stop the run once it used this many tokens (input plus output, as the provider reports them); exit 4 (0: no limit)")
	fl.Float64Var(&l.MaxBudgetUSD, "max-budget-usd", 0, "stop the run once it cost this many US dollars at the model's prices (the configuration's prices); exit 4 (0: no limit)")
}
