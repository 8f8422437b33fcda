package conversation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/audit"
	"github.com/kosong-host/kosong-host/host/capability"
	"github.com/kosong-host/kosong-host/host/hooks"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/policy"
	"github.com/kosong-host/kosong-host/host/prompt"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/subagent"
	"github.com/kosong-host/kosong-host/host/telemetry"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/config"
	"github.com/kosong-host/kosong-host/providers/registry"
)

// Config is what a conversation is made from: what the command line and
// the front end say.
type Config struct {
	// AgentPath is the agent spec file; AgentSource says how it was found
	// (shown by front ends, recorded in the session's metadata).
	AgentPath   string
	AgentSource agent.Source
	// Provider chooses the model (--provider, --model, --base-url,
	// --script, --stream-idle-timeout, Getenv). Open fills in WorkDir and
	// ConfigPath, and the agent's model alias as ModelAlias when none of
	// Provider, Model and Script is given.
	Provider registry.Options
	// MaxContextSize overrides the model alias's context window (0: the
	// alias's; unknown: never compact).
	MaxContextSize int64
	// MaxStepsPerTurn bounds a turn (0: loop.DefaultMaxStepsPerTurn).
	MaxStepsPerTurn int
	// Limits bound the run: model turns, tokens and dollars (budget.go).
	Limits loop.Limits
	// AuditAlso gets a copy of every audit record of the session (a
	// server's log of all its sessions); nil: none.
	AuditAlso *audit.Log
	// Approval is the approval mode; Yolo switches yolo on at the start of
	// a ModeAsk flow (the front end may switch it off again).
	Approval approval.Mode
	Yolo     bool
	// ConfigPath is the configuration file (--config; "" the default
	// path): providers, model aliases, hooks and permission rules.
	ConfigPath string
	// WorkDir is the session's folder (absolute).
	WorkDir string
	// ProjectFolder is the project folder above WorkDir whose agent file
	// the session uses ("" none): its agent files, like WorkDir's, are
	// the project's for the admin policy's project_plugins (policy.go).
	ProjectFolder string
	// Resume is the id of a session to continue (session.Last: the
	// newest of WorkDir); "" starts a new one.
	Resume string
	// SessionRoot overrides the folder of the sessions (session.Options).
	SessionRoot string
	// MCPServers are MCP servers the front end adds beside the agent's.
	MCPServers []spec.MCPServer
	// Ask asks the front end's user to approve an action (ModeAsk);
	// Questions answers tools' questions (nil: nobody can, and the tools
	// that ask are skipped); Observer receives the events from the start
	// (SetObserver changes it).
	Ask       approval.Asker
	Questions approval.UserInput
	// Editor is the editor's files the front end's client lends; nil:
	// the disk.
	Editor   capability.Editor
	Terminal capability.Terminal
	Observer loop.Observer
	// ClientHooks are hooks the front end's client answers.
	ClientHooks []hooks.Hook
	// WatchAgent reloads the agent when its files change, checked before
	// every step.
	WatchAgent bool
	// ReloadAllowed, if set, is asked before every reload of the agent
	// (/reload, WatchAgent): an error refuses it.
	ReloadAllowed func() error
	// DeferStart leaves the SessionStart hooks to Start (the terminal
	// fires them after its banner); else Open fires them.
	DeferStart bool
	// PlanMode starts the conversation in plan mode (--plan).
	PlanMode bool
	// NoPlanTools leaves out EnterPlanMode and ExitPlanMode
	// (Request.NoPlanTools).
	NoPlanTools bool
	// Load holds the agent load options only the command knows: plugin
	// dirs, the built-in plugins, the launcher, the logger, start timeouts,
	// MCP config files, the sandbox executable, DefaultAgentPath, LockFile
	// (default: the one of AgentPath). Open sets the rest (WorkDir,
	// SessionID, StateDir, Decider, Questions, Model, OnProgress).
	Load agent.Options
	// Plugins, when set, hands out the session's plugin processes, shared
	// with the other sessions of this host process that load a plugin the
	// same way (host/pluginpool); nil starts the session's own.
	Plugins plugin.Pool
}

// For is c for a front end's request: its folder, session, askers and
// MCP servers.
func (c Config) For(req Request) Config {
	c.WorkDir, c.Resume, c.Ask, c.Questions, c.Editor, c.Terminal = req.WorkDir, req.Resume, req.Ask, req.Questions, req.Editor, req.Terminal
	c.Yolo = c.Yolo || req.Yolo
	c.ClientHooks = req.ClientHooks
	c.NoPlanTools = req.NoPlanTools
	c.MCPServers = append(slices.Clone(c.MCPServers), req.MCPServers...)
	return c
}

// assembly is what Open built, kept for what changes later: /clear,
// /model, reloads, subagents.
type assembly struct {
	cfg    Config
	spec   *spec.Spec
	agent  *agent.Agent
	system string
	guard  *sessionGuard
	opts   agent.Options
	events *Relay
	source string // SessionStart's: startup or resume
	policy *policy.Policy

	mu          sync.Mutex
	provider    providers.ChatProvider
	contextSize int64
	// images: the model takes images (image_in, or no capabilities
	// declared).
	images bool
	// notes say what a user must know of the model selection: where a
	// base URL that is not the provider's default came from, and what
	// was ignored (a .env base URL without the .env's key).
	notes []string

	// checkpoints keep the files the turn's file tools edit (Rewind).
	checkpoints session.Checkpoints
	// budget counts the run's spending against Config.Limits; prices are
	// the model's (nil: unpriced).
	budget *loop.Budget
	prices *config.Prices
	// aud is the session's audit log; /clear moves it to the new session.
	aud *audit.Log

	startOnce sync.Once
	end       func()
}

// loadSpec loads the agent spec at path.
func loadSpec(path string, load agent.Options) (*spec.Spec, error) {
	return spec.Load(path, spec.LoadOptions{DefaultAgentPath: load.DefaultAgentPath})
}

// loadSpec loads c's agent spec with the front end's MCP servers added,
// and sets the lock file (the agent's) when the command gave none: the
// first step of Open and of Check.
func (c *Config) loadSpec() (*spec.Spec, error) {
	if c.Load.LockFile == "" && c.AgentPath != "" {
		c.Load.LockFile = agent.LockFileFor(c.AgentPath)
	}
	s, err := loadSpec(c.AgentPath, c.Load)
	if err != nil {
		return nil, err
	}
	return withMCP(s, c.MCPServers), nil
}

// providerOptions is how cfg chooses the model for spec s.
func providerOptions(cfg Config, s *spec.Spec) registry.Options {
	opts := cfg.Provider
	opts.WorkDir, opts.ConfigPath = cfg.WorkDir, cfg.ConfigPath
	if opts.Provider == "" && opts.Model == "" && opts.Script == "" {
		opts.ModelAlias = s.Model
	}
	return opts
}

// renderPrompt renders the system prompt of s for the work dir.
func renderPrompt(s *spec.Spec, cfg Config) (string, error) {
	return prompt.Render(s.SystemPromptPath, s.SystemPromptArgs, prompt.Options{WorkDir: cfg.WorkDir, Getenv: cfg.Load.Getenv})
}

// withMCP is s with the front end's MCP servers added.
func withMCP(s *spec.Spec, servers []spec.MCPServer) *spec.Spec {
	if len(servers) == 0 {
		return s
	}
	cp := *s
	cp.MCPServers = append(slices.Clone(s.MCPServers), servers...)
	return &cp
}

// Open is the one assembly of a conversation: the agent spec, the provider
// and model, the system prompt, the session (new or resumed, with its
// metadata), the hooks and permission rules, the approval flow, the
// agent's plugins and MCP servers, the subagents (the Agent tool) and the
// run loop. Every error is the user's configuration's but for a ctx that
// ended while plugins started.
func Open(ctx context.Context, cfg Config) (*Conversation, error) {
	if cfg.MaxStepsPerTurn == 0 {
		cfg.MaxStepsPerTurn = loop.DefaultMaxStepsPerTurn
	}
	s, err := cfg.loadSpec()
	if err != nil {
		return nil, err
	}
	pol, err := checkPolicy(cfg, s) // the admin policy (policy.go)
	if err != nil {
		return nil, err
	}
	guards, err := readGuardConfig(s, cfg.ConfigPath)
	if err != nil {
		return nil, err
	}
	sel, err := selectModel(providerOptions(cfg, s))
	if err != nil {
		return nil, err
	}
	if err := needPrices(cfg.Limits, sel); err != nil {
		return nil, err
	}
	contextSize := int64(sel.MaxContextSize)
	if cfg.MaxContextSize > 0 {
		contextSize = cfg.MaxContextSize
	}
	system, err := renderPrompt(s, cfg)
	if err != nil {
		return nil, err
	}
	sess, history, err := openSession(cfg, s)
	if err != nil {
		return nil, err
	}
	events := &Relay{}
	events.Set(cfg.Observer)
	var tools *toolset.Toolset // the agent's, once loaded
	aud, err := audit.Open(sess.Dir, audit.Options{Session: sess.ID, Agent: s.Name, Args: auditArgs(cfg), Also: cfg.AuditAlso,
		Find: func(name string) (toolset.Tool, bool) {
			if tools == nil {
				return nil, false
			}
			return tools.Find(name)
		}})
	if err != nil {
		return nil, err
	}
	events.tap = aud
	guards.client = cfg.ClientHooks
	guard, err := guards.openGuard(cfg.ConfigPath, cfg.WorkDir, sess.ID, events)
	if err != nil {
		return nil, err
	}
	guard.reload.Allow = reloadAllowed(cfg, pol) // cfg.ReloadAllowed, then the admin policy (policy.go)
	flow := approval.NewFlow(cfg.Approval, cfg.Ask, reportTo(events))
	flow.ForbidYolo(yoloRefusal(pol))
	flow.SetYolo(cfg.Yolo)

	opts := cfg.Load
	opts.WorkDir, opts.SessionID, opts.StateDir = cfg.WorkDir, sess.ID, sess.Dir
	opts.Decider = guard.decider(telemetry.Decider(flow))
	opts.Questions = cfg.Questions
	opts.Editor, opts.Terminal = cfg.Editor, cfg.Terminal
	opts.PluginPool = cfg.Plugins
	opts.Model = &capability.Model{Provider: sel.Provider.Name(), Name: sel.Provider.Model(), Alias: sel.Alias,
		Capabilities: sel.Capabilities, CapabilitiesKnown: sel.CapabilitiesDeclared, MaxContextSize: contextSize}
	opts.OnProgress = func(p toolset.Progress) {
		events.Observe(loop.ToolProgress{ToolCallID: p.ToolCallID, ToolName: p.Tool, Progress: p.Progress,
			Total: p.Total, Message: p.Message})
	}
	a, err := agent.LoadSpec(ctx, s, opts)
	if err != nil {
		aud.Close()
		return nil, err
	}
	a.Source = cfg.AgentSource
	tools = a.Toolset
	asm := &assembly{cfg: cfg, spec: s, agent: a, system: system, guard: guard, opts: opts, events: events,
		provider: sel.Provider, contextSize: contextSize, notes: sel.Notes(), source: "startup",
		images: takesImages(sel.Capabilities, sel.CapabilitiesDeclared), budget: loop.NewBudget(cfg.Limits), prices: sel.Prices, aud: aud, policy: pol}
	if cfg.Resume != "" {
		asm.source = "resume"
	}
	if err := guard.attach(a, s, asm.runSubagent, &asm.checkpoints); err != nil {
		a.Close()
		return nil, err
	}
	var conv *Conversation
	if (flow.Base() != approval.ModeUnattended || cfg.PlanMode) && !cfg.NoPlanTools {
		// Plan mode's tools, where someone can approve a plan (or
		// --plan asks for plan mode) and the client takes part.
		for _, t := range PlanTools(func() *Conversation { return conv }, flow) {
			if err := a.Toolset.Add(t); err != nil {
				a.Close()
				return nil, err
			}
		}
	}
	l, err := asm.newLoop(sel.Provider, history, contextSize)
	if err != nil {
		a.Close()
		return nil, err
	}
	reload := func(ctx context.Context) (*agent.Reloaded, error) {
		res, err := a.Reload(ctx, guard.reload)
		events.Observe(reloadEvent(res, err))
		if err == nil && !conv.Running() {
			a.ApplyPending() // no step runs: take effect now
		}
		return res, err
	}
	if cfg.WatchAgent {
		a.WatchFiles(guard.reload, func(res *agent.Reloaded, err error) { events.Observe(reloadEvent(res, err)) })
	}
	conv = New(Parts{Session: sess, Loop: l, Toolset: a.Toolset, Approvals: flow, Events: events, AgentName: s.Name,
		Reload: reload, Close: func() {
			if asm.end != nil {
				asm.end()
			}
			a.Close()
			aud.Close()
		}, Clear: asm.clear, SetModel: asm.setModel})
	conv.asm = asm
	conv.SetPlanMode(cfg.PlanMode)
	if !cfg.DeferStart {
		conv.Start(ctx)
	}
	return conv, nil
}

// newLoop is the run loop of the conversation with provider p.
func (asm *assembly) newLoop(p providers.ChatProvider, history []providers.Message, size int64) (*loop.Loop, error) {
	asm.mu.Lock()
	prices := asm.prices
	asm.mu.Unlock()
	return loop.New(asm.budgetOf(asm.guard.loopConfig(loop.Config{Provider: telemetry.Provider(p), Toolset: telemetry.Toolset(asm.agent.Toolset, asm.agent.Toolset.Find), System: asm.system,
		History: history, MaxStepsPerTurn: asm.cfg.MaxStepsPerTurn, Observer: asm.events, MaxContextSize: size}, asm.agent), prices))
}

// openSession starts a new session of the work dir, or reopens one: Resume
// session.Last is the newest of the work dir. The session's metadata
// records the work dir and agent (rewritten for a session that has none).
func openSession(cfg Config, s *spec.Spec) (*session.Session, []providers.Message, error) {
	opts := session.Options{Root: cfg.SessionRoot}
	id := cfg.Resume
	if id == session.Last {
		latest, err := session.Latest(opts, cfg.WorkDir)
		if err != nil {
			return nil, nil, err
		}
		id = latest.ID
	}
	meta := session.Meta{WorkDir: cfg.WorkDir, Agent: s.Name, AgentFile: cfg.AgentSource.String(), Created: time.Now()}
	if id == "" {
		sess, err := session.New(opts)
		if err != nil {
			return nil, nil, err
		}
		return sess, nil, sess.WriteMeta(meta)
	}
	sess, history, err := session.Open(opts, id)
	if err != nil {
		return nil, nil, err
	}
	if old, err := session.ReadMeta(sess.Dir); err == nil && old.WorkDir == "" {
		_ = sess.WriteMeta(meta) // a session from before the metadata file
	}
	return sess, history, nil
}

// Start fires the SessionStart hooks (source "startup", or "resume"), once;
// Open does unless Config.DeferStart. Close fires SessionEnd.
func (c *Conversation) Start(ctx context.Context) {
	asm := c.asm
	if asm == nil {
		return
	}
	asm.startOnce.Do(func() { asm.end = asm.guard.start(ctx, asm.source) })
}

// Agent is the loaded agent (nil for a conversation made by New).
func (c *Conversation) Agent() *agent.Agent {
	if c.asm == nil {
		return nil
	}
	return c.asm.agent
}

// WorkDir is the session's folder.
func (c *Conversation) WorkDir() string {
	if c.asm == nil {
		return ""
	}
	return c.asm.cfg.WorkDir
}

// Provider is the model provider of the next turn.
func (c *Conversation) Provider() providers.ChatProvider {
	if c.asm == nil {
		return nil
	}
	c.asm.mu.Lock()
	defer c.asm.mu.Unlock()
	return c.asm.provider
}

// Notes are the lines a front end shows its user about the model
// selection (one line each, for stderr or a log): where a base URL that is
// not the provider's default came from, and a .env base URL ignored because
// the key is not from that .env.
func (c *Conversation) Notes() []string {
	if c.asm == nil {
		return nil
	}
	c.asm.mu.Lock()
	defer c.asm.mu.Unlock()
	return c.asm.notes
}

// TakesImages says whether the model in use takes images in a prompt:
// its alias declares image_in, or declares no capabilities (as for
// ReadMediaFile).
func (c *Conversation) TakesImages() bool {
	if c.asm == nil {
		return false
	}
	c.asm.mu.Lock()
	defer c.asm.mu.Unlock()
	return c.asm.images
}

func takesImages(capabilities []string, declared bool) bool {
	return !declared || slices.Contains(capabilities, "image_in")
}

// MaxContextSize is the context window of the model in use (0: unknown).
func (c *Conversation) MaxContextSize() int64 {
	if c.asm == nil {
		return 0
	}
	c.asm.mu.Lock()
	defer c.asm.mu.Unlock()
	return c.asm.contextSize
}

// ErrCannotChange: the conversation was built without Parts.Clear or
// Parts.SetModel.
var ErrCannotChange = errors.New("this conversation cannot change its session or model")

// Clear starts a new session of the work dir with an empty history; the
// old session stays on disk. It returns ErrBusy while a turn runs.
func (c *Conversation) Clear(ctx context.Context) error {
	if c.parts.Clear == nil {
		return ErrCannotChange
	}
	_, end, err := c.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	sess, l, err := c.parts.Clear()
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.sess, c.l = sess, l
	c.mu.Unlock()
	return nil
}

// SetModel switches to the model alias (or model name) of the
// configuration file; the history carries on with it. It returns ErrBusy
// while a turn runs.
func (c *Conversation) SetModel(ctx context.Context, alias string) error {
	if c.parts.SetModel == nil {
		return ErrCannotChange
	}
	if strings.TrimSpace(alias) == "" {
		return errors.New("no model alias given")
	}
	_, end, err := c.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	l, err := c.parts.SetModel(alias, c.History())
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.l = l
	c.mu.Unlock()
	return nil
}

// clear is Parts.Clear of an opened conversation.
func (asm *assembly) clear() (*session.Session, *loop.Loop, error) {
	cfg := asm.cfg
	cfg.Resume = ""
	sess, _, err := openSession(cfg, asm.spec)
	if err != nil {
		return nil, nil, err
	}
	if err := asm.aud.Switch(sess.Dir, sess.ID); err != nil {
		return nil, nil, err
	}
	asm.mu.Lock()
	p, size := asm.provider, asm.contextSize
	asm.mu.Unlock()
	l, err := asm.newLoop(p, nil, size)
	if err != nil {
		return nil, nil, err
	}
	return sess, l, nil
}

// setModel is Parts.SetModel of an opened conversation.
func (asm *assembly) setModel(alias string, history []providers.Message) (*loop.Loop, error) {
	cfg := asm.cfg
	cfg.Provider = registry.Options{Model: alias, BaseURL: cfg.Provider.BaseURL, Getenv: cfg.Provider.Getenv,
		StreamIdleTimeout: cfg.Provider.StreamIdleTimeout, IgnoreDotEnv: cfg.Provider.IgnoreDotEnv}
	sel, err := selectModel(providerOptions(cfg, asm.spec))
	if err != nil {
		return nil, err
	}
	if err := needPrices(cfg.Limits, sel); err != nil {
		return nil, err
	}
	size := int64(sel.MaxContextSize)
	notes := sel.Notes()
	if cfg.MaxContextSize > 0 {
		size = cfg.MaxContextSize
	}
	asm.mu.Lock()
	old := asm.prices
	asm.prices = sel.Prices
	asm.mu.Unlock()
	l, err := asm.newLoop(sel.Provider, history, size)
	if err != nil {
		asm.mu.Lock()
		asm.prices = old
		asm.mu.Unlock()
		return nil, err
	}
	asm.mu.Lock()
	asm.provider, asm.contextSize, asm.notes = sel.Provider, size, notes
	asm.images = takesImages(sel.Capabilities, sel.CapabilitiesDeclared)
	asm.mu.Unlock()
	return l, nil
}

// runSubagent runs subagent name of the conversation's spec on a task:
// the subagent is opened through the same assembly with its own spec,
// sharing the parent's provider, gate and approvals, its plugins' state
// in StateDir/subagents/NAME, with no Agent tool of its own and no
// session; it runs one turn and returns its last answer.
func (asm *assembly) runSubagent(ctx context.Context, name, task string) (string, error) {
	sub, ok := asm.spec.Subagents[name]
	if !ok {
		return "", fmt.Errorf("no subagent %q", name)
	}
	parent := subagent.CallID(ctx)
	conv, err := asm.openSubagent(ctx, name, sub.Path, loop.ObserverFunc(func(e loop.Event) {
		asm.events.Observe(loop.SubagentEvent{ParentToolCallID: parent, AgentID: name + "-" + parent, SubagentType: name, Event: e})
	}))
	if err != nil {
		return "", err
	}
	defer conv.Close()
	_, turnErr := conv.Turn(ctx, task)
	return lastAnswer(conv.History()), turnErr
}

// openSubagent is Open for a subagent of asm.
// Its loop's events go to obs.
func (asm *assembly) openSubagent(ctx context.Context, name, path string, obs loop.Observer) (*Conversation, error) {
	s, err := loadSpec(path, asm.cfg.Load)
	if err != nil {
		return nil, err
	}
	if err := asm.checkSubagentPolicy(s); err != nil {
		return nil, err
	}
	system, err := renderPrompt(s, asm.cfg)
	if err != nil {
		return nil, err
	}
	opts := asm.opts
	opts.StateDir = filepath.Join(asm.opts.StateDir, "subagents", name)
	a, err := agent.LoadSpec(ctx, s, opts)
	if err != nil {
		return nil, err
	}
	a.Toolset.SetGuard(checkpointGuard{Guard: asm.guard.gate, cp: &asm.checkpoints, workDir: asm.cfg.WorkDir})
	a.Toolset.SetPlanMode(asm.agent.Toolset.PlanMode()) // a subagent plans as its parent does
	asm.mu.Lock()
	p, size, prices := asm.provider, asm.contextSize, asm.prices
	asm.mu.Unlock()
	l, err := loop.New(loop.Config{Provider: telemetry.Provider(p), Toolset: telemetry.Toolset(a.Toolset, a.Toolset.Find), System: system,
		MaxStepsPerTurn: asm.cfg.MaxStepsPerTurn, MaxContextSize: size, Observer: obs, Budget: asm.budget.Subagent(), Prices: prices})
	if err != nil {
		a.Close()
		return nil, err
	}
	return New(Parts{Loop: l, Toolset: a.Toolset, AgentName: s.Name, Close: a.Close}), nil
}

// lastAnswer is the text of the last assistant message.
func lastAnswer(history []providers.Message) string {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == providers.RoleAssistant {
			if t := strings.TrimSpace(history[i].Text()); t != "" {
				return t
			}
		}
	}
	return ""
}

// reportTo reports the approval flow's decisions to obs as
// loop.ApprovalDecided events.
func reportTo(obs loop.Observer) func(approval.Decided) {
	return func(d approval.Decided) {
		obs.Observe(loop.ApprovalDecided{ToolCallID: d.Request.ToolCallID, Plugin: d.Request.Plugin, ToolName: d.Request.ToolName,
			Action: d.Request.Action, Description: d.Request.Description, Approved: d.Decision.Approved,
			Feedback: d.Decision.Feedback, Answer: d.Answer, ForSession: d.ForSession, Waited: d.Waited})
	}
}

// ReportTo is the report function of an approval flow whose decisions go
// to obs as loop.ApprovalDecided events (front ends' tests).
func ReportTo(obs loop.Observer) func(approval.Decided) { return reportTo(obs) }

// auditArgs: the audit log records the arguments themselves
// (KOSONG_AUDIT_ARGUMENTS=true), not only their hash.
func auditArgs(cfg Config) bool {
	getenv := cfg.Load.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return getenv(audit.ArgsEnv) == "true"
}
