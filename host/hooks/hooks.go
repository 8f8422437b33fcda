// Package hooks runs an agent's hooks: shell commands the user configures
// (`hooks:` in agent.yaml and in the configuration file) that the host runs
// at events of a session, with Kimi CLI's semantics.
//
// A hook gets the event as a JSON object on stdin (hook_event_name,
// session_id, cwd and the event's own fields), runs through `sh -c` in the
// work dir with the host's minimal environment (host/proc.Env: no provider
// keys) plus KOSONG_HOOK_EVENT, KOSONG_SESSION_ID, KOSONG_WORK_DIR and, for
// tool events, KOSONG_TOOL_NAME. Exit 0 allows; exit 2 blocks with its
// stderr as the reason; on exit 0 a JSON object on stdout with
// hookSpecificOutput.permissionDecision "deny" blocks (reason
// permissionDecisionReason) and "ask" makes the call ask the user for
// approval. Anything else (another exit code, a command that cannot start,
// a timeout, stdout that is not a JSON object) allows, with a warning:
// hooks fail open. Matching hooks of one event run in parallel; the same
// command twice runs once; the first block (in configuration order) wins.
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/host/proc"
	"github.com/kosong-host/kosong-host/host/telemetry"
)

// The events.
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	UserPromptSubmit   = "UserPromptSubmit"
	Stop               = "Stop"
	SessionStart       = "SessionStart"
	SessionEnd         = "SessionEnd"
	SubagentStart      = "SubagentStart"
	SubagentStop       = "SubagentStop"
	PreCompact         = "PreCompact"
	PostCompact        = "PostCompact"
)

// Events lists the events, in the order of docs/hooks-and-permissions.md.
var Events = []string{PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SessionStart, SessionEnd,
	SubagentStart, SubagentStop, PreCompact, PostCompact}

// Timeouts.
const (
	DefaultTimeout = 30 * time.Second
	MinTimeout     = time.Second
	MaxTimeout     = 600 * time.Second
	// SessionEndCap bounds SessionEnd hooks, as in Kimi.
	SessionEndCap = 5 * time.Second
)

// DefaultBlockReason is the reason of a PreToolUse block without one.
const DefaultBlockReason = "Blocked by PreToolUse hook"

// Hook is one configured hook.
type Hook struct {
	Event   string
	Command string
	// Matcher is a regular expression searched in the event's target (the
	// tool name for tool events); "" matches everything.
	Matcher string
	// Timeout; 0 is DefaultTimeout.
	Timeout time.Duration
	// File and Line say where the hook was configured.
	File string
	Line int
	// Handler, when set, answers the hook instead of a command (a client
	// hook: the wire client subscribed to the event); Command then only
	// names it. It gets the JSON a command would get on stdin; an error
	// or the timeout allows, with a warning, as a failed command does.
	Handler Handler
}

// Handler answers a client hook: allow or block, with a reason.
type Handler func(ctx context.Context, target string, input []byte) (Action, string, error)

// Compile checks a hook: a known event, a command, a valid matcher and a
// timeout in 1-600 s. The error names the field, not the file.
func (h Hook) Compile() (*regexp.Regexp, error) {
	known := false
	for _, e := range Events {
		known = known || e == h.Event
	}
	if !known {
		return nil, fmt.Errorf("unknown event %q (known: %s)", h.Event, strings.Join(Events, ", "))
	}
	if strings.TrimSpace(h.Command) == "" && h.Handler == nil {
		return nil, errors.New("command is required")
	}
	if h.Timeout != 0 && (h.Timeout < MinTimeout || h.Timeout > MaxTimeout) {
		return nil, fmt.Errorf("timeout %s is out of range: 1 to 600 seconds", h.Timeout)
	}
	re, err := regexp.Compile(h.Matcher)
	if err != nil {
		return nil, fmt.Errorf("matcher %q: %v", h.Matcher, err)
	}
	return re, nil
}

// Action is a hook's answer.
type Action string

// The actions.
const (
	ActionAllow Action = "allow"
	ActionBlock Action = "block"
	ActionAsk   Action = "ask"
)

// Run is one hook run, as front ends show it.
type Run struct {
	Event    string
	Target   string
	Command  string
	Action   Action
	Reason   string
	ExitCode int
	Duration time.Duration
	// Warning says why a failed hook was taken as allow ("" when it did
	// not fail).
	Warning string
}

// Outcome sums up the hooks of one event.
type Outcome struct {
	Action Action
	Reason string
}

// Config configures a Runner.
type Config struct {
	Hooks     []Hook
	WorkDir   string
	SessionID string
	// Getenv reads the host environment for proc.Env; nil is os.Getenv.
	Getenv func(string) string
	// OnRun receives every run, from any goroutine; nil drops them.
	OnRun func(Run)
	// Warn receives the warnings of failed hooks; nil drops them.
	Warn func(msg string)
}

// Runner runs the hooks of a session. A nil *Runner runs nothing.
type Runner struct {
	cfg   Config
	hooks []compiled
}

type compiled struct {
	Hook
	re *regexp.Regexp
}

// New checks the hooks and returns a Runner.
func New(cfg Config) (*Runner, error) {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	r := &Runner{cfg: cfg}
	for _, h := range cfg.Hooks {
		re, err := h.Compile()
		if err != nil {
			return nil, fmt.Errorf("%s: hooks: %v", where(h), err)
		}
		if h.Timeout == 0 {
			h.Timeout = DefaultTimeout
		}
		r.hooks = append(r.hooks, compiled{Hook: h, re: re})
	}
	return r, nil
}

func where(h Hook) string {
	if h.Line > 0 {
		return fmt.Sprintf("%s:%d", h.File, h.Line)
	}
	return h.File
}

// Has reports whether some hook listens to event.
func (r *Runner) Has(event string) bool {
	if r == nil {
		return false
	}
	for _, h := range r.hooks {
		if h.Event == event {
			return true
		}
	}
	return false
}

// Fire runs the hooks of event whose matcher matches target, in parallel,
// with input (the event's own fields) on stdin, and waits for them. It
// never fails: errors are warnings and allow.
func (r *Runner) Fire(ctx context.Context, event, target string, input map[string]any) Outcome {
	if r == nil {
		return Outcome{Action: ActionAllow}
	}
	var todo []compiled
	seen := map[string]bool{}
	for _, h := range r.hooks {
		if h.Event != event || !h.re.MatchString(target) || seen[h.Command] {
			continue
		}
		seen[h.Command] = true
		todo = append(todo, h)
	}
	if len(todo) == 0 {
		return Outcome{Action: ActionAllow}
	}
	payload := map[string]any{}
	for k, v := range input {
		payload[k] = v
	}
	payload["hook_event_name"] = event
	payload["session_id"] = r.cfg.SessionID
	payload["cwd"] = r.cfg.WorkDir
	stdin, err := json.Marshal(payload)
	if err != nil {
		stdin = []byte("{}")
	}
	toolName, _ := input["tool_name"].(string)
	runs := make([]Run, len(todo))
	var wg sync.WaitGroup
	for i, h := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i] = r.run(ctx, h, target, toolName, stdin)
			if r.cfg.OnRun != nil {
				r.cfg.OnRun(runs[i])
			}
			if runs[i].Warning != "" && r.cfg.Warn != nil {
				r.cfg.Warn(runs[i].Warning)
			}
		}()
	}
	wg.Wait()
	out := Outcome{Action: ActionAllow}
	for _, run := range runs {
		switch run.Action {
		case ActionBlock:
			return Outcome{Action: ActionBlock, Reason: run.Reason}
		case ActionAsk:
			if out.Action == ActionAllow {
				out = Outcome{Action: ActionAsk, Reason: run.Reason}
			}
		}
	}
	return out
}

func (r *Runner) run(ctx context.Context, h compiled, target, toolName string, stdin []byte) Run {
	timeout := h.Timeout
	if h.Event == SessionEnd && timeout > SessionEndCap {
		timeout = SessionEndCap
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if h.Handler != nil {
		return runHandler(ctx, h, target, stdin, timeout)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", h.Command)
	cmd.Dir = r.cfg.WorkDir
	cmd.Env = append(proc.Env(r.cfg.Getenv), "KOSONG_HOOK_EVENT="+h.Event, "KOSONG_SESSION_ID="+r.cfg.SessionID,
		"KOSONG_WORK_DIR="+r.cfg.WorkDir)
	if toolName != "" {
		cmd.Env = append(cmd.Env, "KOSONG_TOOL_NAME="+toolName)
	}
	cmd.Env = append(cmd.Env, telemetry.Env(ctx)...) // TRACEPARENT, TRACESTATE
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	proc.Isolate(cmd)
	cmd.Cancel = func() error {
		if cmd.Process != nil {
			proc.KillGroup(cmd.Process.Pid)
		}
		return nil
	}
	// A grandchild holding stdout open must not keep us past the timeout.
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	run := Run{Event: h.Event, Target: target, Command: h.Command, Action: ActionAllow, Duration: time.Since(start)}
	if cmd.ProcessState != nil {
		run.ExitCode = cmd.ProcessState.ExitCode()
	}
	errText := strings.TrimSpace(stderr.String())
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		run.ExitCode = -1
		run.Warning = fmt.Sprintf("hook %q (%s) timed out after %s: allowed", h.Command, h.Event, timeout)
	case err != nil && run.ExitCode == 2:
		run.Action, run.Reason = ActionBlock, errText
		if run.Reason == "" && h.Event == PreToolUse {
			run.Reason = DefaultBlockReason
		}
	case err != nil:
		msg := err.Error()
		if errText != "" {
			msg = lastLine(errText)
		}
		run.Warning = fmt.Sprintf("hook %q (%s) failed (exit %d: %s): allowed", h.Command, h.Event, run.ExitCode, msg)
	default:
		run.Action, run.Reason, run.Warning = answer(h, stdout.Bytes())
	}
	return run
}

// runHandler runs a client hook: its handler's answer, or allow with a
// warning when it fails or takes longer than timeout.
func runHandler(ctx context.Context, h compiled, target string, stdin []byte, timeout time.Duration) Run {
	start := time.Now()
	action, reason, err := h.Handler(ctx, target, stdin)
	run := Run{Event: h.Event, Target: target, Command: h.Command, Action: ActionAllow, Duration: time.Since(start)}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		run.Warning = fmt.Sprintf("hook %q (%s) timed out after %s: allowed", h.Command, h.Event, timeout)
	case err != nil:
		run.Warning = fmt.Sprintf("hook %q (%s) failed (%v): allowed", h.Command, h.Event, err)
	case action == ActionBlock:
		run.Action, run.Reason = ActionBlock, reason
		if run.Reason == "" && h.Event == PreToolUse {
			run.Reason = DefaultBlockReason
		}
	}
	return run
}

// answer reads the JSON answer of a hook that exited 0.
func answer(h compiled, stdout []byte) (Action, string, string) {
	out := bytes.TrimSpace(stdout)
	if len(out) == 0 {
		return ActionAllow, "", ""
	}
	var v struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return ActionAllow, "", fmt.Sprintf("hook %q (%s) printed output that is not a JSON object (%v): allowed",
			h.Command, h.Event, err)
	}
	reason := v.HookSpecificOutput.PermissionDecisionReason
	switch v.HookSpecificOutput.PermissionDecision {
	case "deny":
		if reason == "" && h.Event == PreToolUse {
			reason = DefaultBlockReason
		}
		return ActionBlock, reason, ""
	case "ask":
		return ActionAsk, reason, ""
	}
	return ActionAllow, "", ""
}

func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Loop adapts a runner to the loop's hooks (loop.Hooks): UserPromptSubmit,
// Stop, PreCompact and PostCompact. Runner returns the current runner (a
// reload may replace it).
type Loop struct{ Runner func() *Runner }

// UserPromptSubmit fires UserPromptSubmit; the matcher sees the prompt.
func (l Loop) UserPromptSubmit(ctx context.Context, prompt string) (bool, string) {
	o := l.Runner().Fire(ctx, UserPromptSubmit, prompt, map[string]any{"prompt": prompt})
	return o.Action == ActionBlock, o.Reason
}

// Stop fires Stop; a block's reason continues the turn.
func (l Loop) Stop(ctx context.Context, active bool) string {
	o := l.Runner().Fire(ctx, Stop, "", map[string]any{"stop_hook_active": active})
	if o.Action != ActionBlock {
		return ""
	}
	return o.Reason
}

// PreCompact fires PreCompact.
func (l Loop) PreCompact(ctx context.Context, trigger string, tokens int64) {
	l.Runner().Fire(ctx, PreCompact, trigger, map[string]any{"trigger": trigger, "token_count": tokens})
}

// PostCompact fires PostCompact.
func (l Loop) PostCompact(ctx context.Context, trigger string, tokens int64) {
	l.Runner().Fire(ctx, PostCompact, trigger, map[string]any{"trigger": trigger, "estimated_token_count": tokens})
}
