package conversation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/hooks"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/permission"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/subagent"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers/config"
)

// guardConfig is what the agent's spec and the configuration file say
// about hooks and permission rules (the config file's first: both lists
// are joined).
type guardConfig struct {
	hooks []hooks.Hook
	rules []permission.Rule
	// client are the front end's client hooks, run after the others.
	client []hooks.Hook
}

// readGuardConfig reads `hooks` and `permissions` of the configuration file
// (--config, else the default path; a missing file has none) and of the spec.
func readGuardConfig(s *spec.Spec, configPath string) (guardConfig, error) {
	if configPath == "" {
		configPath = config.DefaultPath(os.Getenv)
	}
	if abs, err := filepath.Abs(configPath); err == nil && configPath != "" {
		configPath = abs
	}
	var gc guardConfig
	f, _, err := config.LoadOptional(configPath)
	if err != nil {
		return gc, err
	}
	if f.Hooks != nil {
		h, err := spec.ParseHooks(f.Path, f.Hooks)
		if err != nil {
			return gc, err
		}
		gc.hooks = append(gc.hooks, h...)
	}
	if f.Permissions != nil {
		r, err := spec.ParsePermissions(f.Path, f.Permissions)
		if err != nil {
			return gc, err
		}
		gc.rules = append(gc.rules, r...)
	}
	gc.hooks = append(gc.hooks, s.Hooks...)
	gc.rules = append(gc.rules, s.Permissions...)
	return gc, nil
}

// ruleSet builds the permission rules for a work dir.
func (gc guardConfig) ruleSet(workDir string) *permission.Set {
	set := &permission.Set{WorkDir: workDir}
	set.Home, _ = os.UserHomeDir()
	set.Add(gc.rules...)
	return set
}

// hookRunner builds the session's hook runner; every run goes to obs as a
// loop.HookRan event.
func (gc guardConfig) hookRunner(workDir, sessionID string, obs loop.Observer) (*hooks.Runner, error) {
	return hooks.New(hooks.Config{Hooks: append(slices.Clone(gc.hooks), gc.client...), WorkDir: workDir, SessionID: sessionID,
		OnRun: func(r hooks.Run) {
			obs.Observe(loop.HookRan{Event: r.Event, Target: r.Target, Command: r.Command, Action: string(r.Action),
				Reason: r.Reason, ExitCode: r.ExitCode, Duration: r.Duration, Warning: r.Warning})
		}})
}

// reloadCheck vets a reloaded spec: its hooks and rules (with the
// configuration file's) must load and the rules must name its tools. The
// new hooks and rules replace the gate's when the new toolset takes effect.
func reloadCheck(configPath, workDir, sessionID string, obs loop.Observer, gate *permission.Gate, client []hooks.Hook) func(*spec.Spec, []toolset.Spec) (func(), error) {
	return func(s *spec.Spec, tools []toolset.Spec) (func(), error) {
		gc, err := readGuardConfig(s, configPath)
		if err != nil {
			return nil, err
		}
		gc.client = client
		runner, err := gc.hookRunner(workDir, sessionID, obs)
		if err != nil {
			return nil, err
		}
		set := gc.ruleSet(workDir)
		pt := make([]permission.Tool, len(tools))
		for i, t := range tools {
			pt[i] = permission.ToolOf(t)
		}
		if err := set.Bind(pt); err != nil {
			return nil, err
		}
		return func() { gate.SetRules(set); gate.SetHooks(runner) }, nil
	}
}

// reloadEvent is the loop event reporting a reload.
func reloadEvent(res *agent.Reloaded, err error) loop.AgentReloaded {
	if err != nil {
		return loop.AgentReloaded{Err: err}
	}
	return loop.AgentReloaded{Started: res.Started, Stopped: res.Stopped, Kept: res.Kept, Tools: res.Tools}
}

// withSubagentHooks fires SubagentStart and SubagentStop around each
// subagent run (prompt and response cut to 500 characters, as in Kimi).
func withSubagentHooks(run subagent.Runner, gate *permission.Gate) subagent.Runner {
	return func(ctx context.Context, name, task string) (string, error) {
		gate.Hooks().Fire(ctx, hooks.SubagentStart, name, map[string]any{"agent_name": name, "prompt": cut(task, 500)})
		answer, err := run(ctx, name, task)
		gate.Hooks().Fire(context.WithoutCancel(ctx), hooks.SubagentStop, name, map[string]any{"agent_name": name, "response": cut(answer, 500)})
		return answer, err
	}
}

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// ruleTools is what the rules know of the toolset's tools.
func ruleTools(ts *toolset.Toolset) []permission.Tool {
	var out []permission.Tool
	for _, name := range ts.Names() {
		if t, ok := ts.Find(name); ok {
			out = append(out, permission.ToolOf(t.Spec()))
		}
	}
	return out
}

// bindRules checks the rules against the loaded tools.
func bindRules(set *permission.Set, ts *toolset.Toolset) error {
	if err := set.Bind(ruleTools(ts)); err != nil {
		return fmt.Errorf("%w", err)
	}
	return nil
}

// sessionGuard is one session's hooks and permission rules: the gate the
// toolset, the loop, the approvals and the subagents go through, and the
// reload options that renew them with the agent.
type sessionGuard struct {
	gate   *permission.Gate
	rules  *permission.Set
	reload agent.ReloadOptions
}

// openGuard builds the session's gate from gc; hook runs are reported to obs.
func (gc guardConfig) openGuard(configPath, workDir, sessionID string, obs loop.Observer) (*sessionGuard, error) {
	runner, err := gc.hookRunner(workDir, sessionID, obs)
	if err != nil {
		return nil, err
	}
	rules := gc.ruleSet(workDir)
	gate := permission.NewGate(rules, runner, obs)
	return &sessionGuard{gate: gate, rules: rules,
		reload: agent.ReloadOptions{Check: reloadCheck(configPath, workDir, sessionID, obs, gate, gc.client)}}, nil
}

// decider puts the permission rules before the front end's approvals.
func (sg *sessionGuard) decider(next approval.Decider) approval.Decider { return sg.gate.Decider(next) }

// attach adds the subagent tool (when the spec has subagents; their calls
// go through the same gate, and SubagentStart/SubagentStop fire), binds the
// rules to the loaded tools and puts the gate before every call, with the
// copies of edited files kept in cp.
func (sg *sessionGuard) attach(a *agent.Agent, s *spec.Spec, run subagent.Runner, cp *session.Checkpoints) error {
	if len(s.Subagents) > 0 {
		if err := a.Toolset.Add(subagent.Tool(s.Subagents, withSubagentHooks(run, sg.gate))); err != nil {
			return err
		}
	}
	if err := bindRules(sg.rules, a.Toolset); err != nil {
		return err
	}
	a.Toolset.SetGuard(checkpointGuard{Guard: sg.gate, cp: cp, workDir: sg.rules.WorkDir})
	return nil
}

// loopConfig sets the loop's hooks (UserPromptSubmit, Stop, compaction)
// and its step boundary, where reloads of a take effect.
func (sg *sessionGuard) loopConfig(cfg loop.Config, a *agent.Agent) loop.Config {
	cfg.Hooks = hooks.Loop{Runner: sg.gate.Hooks}
	cfg.BeforeStep = a.BeforeStep
	return cfg
}

// start fires SessionStart (source "startup" or "resume") and returns the
// function that fires SessionEnd and waits for the PostToolUse hooks still
// running.
func (sg *sessionGuard) start(ctx context.Context, source string) (end func()) {
	sg.gate.Hooks().Fire(ctx, hooks.SessionStart, source, map[string]any{"source": source})
	return func() {
		sg.gate.Hooks().Fire(context.WithoutCancel(ctx), hooks.SessionEnd, "exit", map[string]any{"reason": "exit"})
		sg.gate.Wait()
	}
}

// Rules are the permission rules a conversation of spec s in workDir
// applies (the configuration file's, then the spec's), bound to the tools
// of ts: what `permissions check` asks.
func Rules(s *spec.Spec, configPath, workDir string, ts *toolset.Toolset) (*permission.Set, error) {
	gc, err := readGuardConfig(s, configPath)
	if err != nil {
		return nil, err
	}
	set := gc.ruleSet(workDir)
	if err := bindRules(set, ts); err != nil {
		return nil, err
	}
	return set, nil
}
