// Package shell is the Shell tool: run a command in the user's shell, in the
// working directory, after the user approves it.
package shell

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

//go:embed *.md
var descriptions embed.FS

const (
	// defaultTimeout and maxTimeout bound a command's run, in seconds.
	defaultTimeout = 60
	maxTimeout     = 300

	// toolTimeout is the host's deadline for one Shell call. It is above
	// maxTimeout on purpose: the tool's own timeout must always fire first,
	// so that the model gets `Command timed out after Ns` with the output
	// printed so far instead of a bare host timeout that loses it. The 10 s
	// margin covers killing the process group and waitDelay.
	toolTimeout = 310 * time.Second

	// waitDelay bounds how long Wait keeps reading the output pipes after the
	// shell has exited (or been killed) while some other process, e.g. one
	// started in the background with `&`, still holds them open.
	waitDelay = 2 * time.Second

	// maxCapture caps the output kept in memory; the SDK's output caps cut
	// what the model sees much earlier.
	maxCapture = 8 << 20

	// approvalAction is the approval class of every command, and
	// backgroundAction of those run in the background.
	approvalAction   = "run command"
	backgroundAction = "run background command"
)

// Params are the Shell tool's arguments.
type Params struct {
	Command string `json:"command" minLength:"1" jsonschema:"The command to run, as you would type it at a shell prompt."`
	Timeout int    `json:"timeout,omitempty" default:"60" minimum:"1" maximum:"86400" jsonschema:"Timeout in seconds (default 60, at most 300; up to 86400 with run_in_background). The command and all its child processes are killed when it expires."`
	// RunInBackground and Description start a background task (tasks.go).
	RunInBackground bool   `json:"run_in_background,omitempty" default:"false" jsonschema:"Run the command as a background task and return at once with its task id (default false)."`
	Description     string `json:"description,omitempty" jsonschema:"A short description of the background task; required with run_in_background."`
}

// ShellBlock is the "shell" display block: the command shown to the user.
type ShellBlock struct {
	Language string `json:"language"`
	Command  string `json:"command"`
}

// Shell runs commands in the user's shell.
type Shell struct {
	approval pluginsdk.Approval
	env      pluginsdk.Environment
	// session's state dir keeps the background tasks' output.
	session pluginsdk.Session
	// terminal, when the host lends the editor's terminal, runs the
	// foreground commands there; nil: the tool runs them.
	terminal pluginsdk.Terminal
}

// NewShell constructs the tool from the host's Approval, Environment,
// Session and Terminal (nil when the host lends no editor terminal).
func NewShell(a pluginsdk.Approval, env pluginsdk.Environment, sess pluginsdk.Session, term pluginsdk.Terminal) (*Shell, error) {
	return &Shell{approval: a, env: env, session: sess, terminal: term}, nil
}

// Call asks the user to approve the command, then runs it.
func (s *Shell) Call(ctx context.Context, p Params) (r pluginsdk.Result) {
	defer func() { r = withSandboxNote(r) }()
	if strings.TrimSpace(p.Command) == "" {
		return pluginsdk.Error("The command is empty.").WithBrief("Empty command")
	}
	timeout := p.Timeout
	if timeout == 0 {
		timeout = defaultTimeout
	}
	if p.RunInBackground {
		if timeout < 1 || timeout > maxBackgroundTimeout {
			return pluginsdk.Error(fmt.Sprintf("timeout must be between 1 and %d seconds for a background task, got %d.",
				maxBackgroundTimeout, timeout)).WithBrief("Invalid timeout")
		}
		return s.startBackground(ctx, p, timeout)
	}
	if timeout < 1 || timeout > maxTimeout {
		return pluginsdk.Error(fmt.Sprintf("timeout must be between 1 and %d seconds, got %d.", maxTimeout, timeout)).
			WithBrief("Invalid timeout")
	}
	sh := s.env.Shell()
	d, err := s.approval.Request(ctx, approvalAction, fmt.Sprintf("Run command `%s`", p.Command),
		pluginsdk.DisplayBlock{Kind: "shell", Data: ShellBlock{Language: shellLanguage(sh), Command: p.Command}})
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Could not ask the user to approve the command: %v", err)).WithBrief("Approval failed")
	}
	if !d.Approved {
		return pluginsdk.Rejected(d.Feedback)
	}
	if s.terminal != nil {
		return runInTerminal(ctx, s.terminal, sh, s.env.WorkDir(), p.Command, time.Duration(timeout)*time.Second)
	}
	return run(ctx, sh, s.env.WorkDir(), p.Command, time.Duration(timeout)*time.Second)
}

// runInTerminal runs command with the shell in the editor's terminal,
// which ends it when timeout expires or ctx is cancelled.
func runInTerminal(ctx context.Context, term pluginsdk.Terminal, sh pluginsdk.Shell, dir, command string, timeout time.Duration) pluginsdk.Result {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	path, flag := shellCommand(sh)
	r, err := term.Run(runCtx, path, []string{flag, command}, dir, maxCapture)
	switch {
	case err != nil && ctx.Err() != nil:
		return pluginsdk.Error("The command was cancelled.").WithOutput(r.Output).WithBrief("Cancelled")
	case err != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded):
		secs := int(timeout / time.Second)
		return pluginsdk.Error(fmt.Sprintf("Command timed out after %ds", secs)).WithOutput(r.Output).
			WithBrief(fmt.Sprintf("Timed out after %ds", secs))
	case err != nil:
		return pluginsdk.Error(fmt.Sprintf("Could not run the command in the editor's terminal: %v", err)).WithBrief("Terminal failed")
	case r.Signal != "":
		return pluginsdk.Error(fmt.Sprintf("Command ended on signal %s", r.Signal)).WithOutput(r.Output).WithBrief("Killed by " + r.Signal)
	case r.ExitCode != 0:
		return pluginsdk.Error(fmt.Sprintf("Command failed with exit code %d", r.ExitCode)).WithOutput(r.Output).
			WithBrief(fmt.Sprintf("Failed with exit code %d", r.ExitCode))
	}
	res := pluginsdk.Ok(r.Output)
	if r.Output == "" {
		res = res.WithMessage("Command executed successfully.")
	}
	if r.Truncated {
		res = res.WithMessage(fmt.Sprintf("Only the last %d bytes of output were kept.", maxCapture))
	}
	return res
}

// run runs command with the shell in dir, killing its whole process group
// when timeout expires or ctx is cancelled.
func run(ctx context.Context, sh pluginsdk.Shell, dir, command string, timeout time.Duration) pluginsdk.Result {
	// The command's span: under the host's execute_tool span when the host
	// traces and the plugin's process exports (a no-op otherwise).
	ctx, span := otel.Tracer("github.com/kosong-host/kosong-host/plugins/shell").Start(ctx, "shell command")
	defer span.End()
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	path, flag := shellCommand(sh)
	cmd := exec.CommandContext(runCtx, path, flag, command)
	cmd.Dir = dir
	if env := pluginsdk.TraceEnv(ctx); env != nil {
		// The command's own tracing nests under the call.
		cmd.Env = append(os.Environ(), env...)
	}
	// One writer for both streams: exec then shares one pipe between them,
	// which keeps stdout and stderr in the order they were written.
	out := &capped{max: maxCapture}
	cmd.Stdout, cmd.Stderr = out, out
	startInOwnGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay

	err := cmd.Start()
	if err == nil {
		untrack := pluginsdk.TrackProcessGroup(cmd.Process.Pid)
		err = cmd.Wait()
		keepTracked(cmd.Process.Pid, untrack)
	}
	output := out.String()
	var exitErr *exec.ExitError
	switch {
	case err != nil && ctx.Err() != nil:
		return pluginsdk.Error("The command was cancelled.").WithOutput(output).WithBrief("Cancelled")
	case err != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded):
		secs := int(timeout / time.Second)
		return pluginsdk.Error(fmt.Sprintf("Command timed out after %ds", secs)).WithOutput(output).
			WithBrief(fmt.Sprintf("Timed out after %ds", secs))
	case errors.As(err, &exitErr):
		if code := exitErr.ExitCode(); code >= 0 {
			return pluginsdk.Error(fmt.Sprintf("Command failed with exit code %d", code)).WithOutput(output).
				WithBrief(fmt.Sprintf("Failed with exit code %d", code))
		}
		return pluginsdk.Error(fmt.Sprintf("Command failed: %v", exitErr)).WithOutput(output).WithBrief("Failed")
	case errors.Is(err, exec.ErrWaitDelay):
		// The shell exited with 0, but something it left behind still held
		// its output open.
		return pluginsdk.Ok(output).WithMessage("The command succeeded, but a background process it started kept " +
			"the output open; output printed after the command ended is not shown. Redirect the output of " +
			"background processes to a file.")
	case err != nil:
		return pluginsdk.Error(fmt.Sprintf("Could not run the command with %s: %v", path, err)).WithBrief("Shell failed")
	}
	r := pluginsdk.Ok(output)
	if output == "" {
		r = r.WithMessage("Command executed successfully.")
	}
	if out.dropped > 0 {
		r = r.WithMessage(fmt.Sprintf("Only the first %d bytes of output were kept; %d more were discarded.", maxCapture, out.dropped))
	}
	return r
}

// groupPoll is how often the process group of a command that left
// background jobs is checked for emptiness.
const groupPoll = time.Second

// keepTracked keeps a finished command's process group tracked while
// anything in it still runs: a background job (`npm run dev &`) lives on
// for the session, and is killed with the plugin when the session ends. An
// empty group is untracked at once, so that its id, free to be reused, is
// never killed.
func keepTracked(pgid int, untrack func()) {
	if groupEmpty(pgid) {
		untrack()
		return
	}
	go func() {
		for range time.Tick(groupPoll) {
			if groupEmpty(pgid) {
				untrack()
				return
			}
		}
	}()
}

// shellCommand returns the shell's path and the flag that makes it run a
// command string.
func shellCommand(sh pluginsdk.Shell) (path, flag string) {
	path = sh.Path
	if path == "" {
		if runtime.GOOS == "windows" {
			return "cmd.exe", "/C"
		}
		path = "/bin/sh"
	}
	switch strings.ToLower(strings.TrimSuffix(filepath.Base(path), ".exe")) {
	case "cmd":
		return path, "/C"
	case "powershell", "pwsh":
		return path, "-Command"
	}
	return path, "-c"
}

func shellLanguage(sh pluginsdk.Shell) string {
	if sh.Name != "" {
		return sh.Name
	}
	return "sh"
}

// capped is a buffer that keeps the first max bytes written to it and counts
// the rest. exec copies into it from one goroutine and Wait returns only when
// that copy is done, so it needs no lock.
type capped struct {
	buf     bytes.Buffer
	max     int
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room >= len(p) {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (c *capped) String() string { return strings.ToValidUTF8(c.buf.String(), "\uFFFD") }

type descriptionData struct {
	ShellHint                  string
	DefaultTimeout, MaxTimeout int
}

// definitions are the tools of this plugin.
func definitions() []pluginsdk.Definition {
	hint := "e.g. bash or zsh"
	if runtime.GOOS == "windows" {
		hint = "e.g. PowerShell or cmd"
	}
	return append([]pluginsdk.Definition{
		pluginsdk.NewTool[Params]("Shell", "Run a shell command.", NewShell,
			pluginsdk.WithRuleArgument("command"),
			pluginsdk.Destructive(), pluginsdk.OpenWorld(),
			pluginsdk.WithTimeout(toolTimeout),
			pluginsdk.WithDescriptionFile(descriptions, "shell.md",
				descriptionData{ShellHint: hint, DefaultTimeout: defaultTimeout, MaxTimeout: maxTimeout})),
	}, taskDefinitions()...)
}

// Tools are the tools this plugin serves, to the host as a built-in or as
// its own binary (cmd/kosong-plugin-shell).
func Tools() []pluginsdk.Definition { return definitions() }
