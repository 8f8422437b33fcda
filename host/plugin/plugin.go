package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/capability"
	"github.com/kosong-host/kosong-host/host/declcache"
	"github.com/kosong-host/kosong-host/host/supervise"
	"github.com/kosong-host/kosong-host/host/telemetry"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// Call timeouts: a tool's own default applies unless the agent overrides
// it; either is capped by MaxCallTimeout.
const (
	DefaultCallTimeout = 10 * time.Minute
	MaxCallTimeout     = time.Hour
)

// loadTimeout bounds a plugin's Load (its tools' constructors).
const loadTimeout = 30 * time.Second

// Spec says which plugin binary to load and which of its tools.
type Spec struct {
	Config
	// Tools are the tools to load, in order; nil means every tool the
	// binary offers but those in Exclude.
	Tools   []string
	Exclude []string
	// ConfigFor returns a tool's configuration block (JSON), nil for none;
	// nil means no tool has one.
	ConfigFor func(tool string) json.RawMessage
	// Timeout overrides the default call timeout of every tool; 0 keeps it.
	Timeout time.Duration
	// Source names where the tools come from in listings; "" means
	// "plugin NAME (PATH)".
	Source string
}

func (sp Spec) source(path string) string {
	if sp.Source != "" {
		return sp.Source
	}
	return fmt.Sprintf("plugin %s (%s)", sp.Name, path)
}

// Options are shared by the plugins of an agent.
type Options struct {
	SessionID string
	WorkDir   string
	// StateDir is the session's state dir; each plugin gets
	// StateDir/plugins/NAME ("" = none).
	StateDir string
	Decider  approval.Decider
	// Env is what the Environment capability reports (see Environment).
	Env capability.Environment
	// RestartBackoff defaults to supervise.DefaultBackoff.
	RestartBackoff time.Duration
	// OnProgress receives the progress of calls whose context carries no
	// callback (toolset.WithProgress).
	OnProgress func(toolset.Progress)
	// Questions answers the UserInput capability; nil when no one can
	// answer (the capability is then not offered).
	Questions approval.UserInput
	// Model are the session's model facts; nil offers no Model capability.
	Model *capability.Model
	// Editor is the editor's files; nil offers no Editor capability.
	Editor capability.Editor
	// Terminal is the editor's terminal; nil offers no Terminal capability.
	Terminal capability.Terminal
	// Pool, when set, hands out the plugin processes, sharing one between
	// the sessions that load the same plugin the same way (see Pool); nil
	// launches a process for each plugin of the session.
	Pool Pool
	// Declarations, when set, makes plugins start when first needed: a
	// plugin whose declaration (and load outcome, for the same inputs)
	// is kept there is not started by Load, but at its first call (see
	// lazy.go); the others start as without it, and their declarations are
	// kept. Nil starts every plugin at Load. Shared processes (Pool) and
	// remote tool servers always start at Load.
	Declarations declcache.Store
}

// Pool hands out plugin processes that several sessions of a host share,
// each with its own Load (host/pluginpool implements it).
type Pool interface {
	// Acquire returns a process for the plugin cfg launches: one shared
	// with other sessions, or the session's own when the plugin cannot be
	// shared (see Lease). The error is Launch's.
	Acquire(ctx context.Context, cfg Config) (Lease, error)
}

// Lease is a process a Pool handed out.
type Lease struct {
	// Process is the running process; its Tools are what it described.
	Process *Process
	// Sup supervises a shared process (its Start launches the plugin again,
	// loading nothing: each session loads its tools again before its next
	// call), and Release gives it back once the session is done with it.
	// Both are nil when Process is the session's own.
	Sup     *supervise.Supervisor[*Process]
	Release func()
}

// Status is the load outcome of one tool of a plugin.
type Status struct {
	Name         string
	Plugin       string
	Path         string
	Status       string // "loaded" or "skipped"
	Reason       string
	Capabilities []string
	// Source is the Spec's source text.
	Source string
	// Tool is the tool to add to the toolset; nil when skipped.
	Tool toolset.Tool
}

// Loaded are the plugins of an agent that started and loaded, the status of
// their tools (in spec order) and every failure, one line each, but the
// plugins that did not start within the start timeout: those are TimedOut.
type Loaded struct {
	Plugins  []*Plugin
	Status   []Status
	Failures []string
	TimedOut StartTimeouts
}

// Close stops every plugin, in parallel.
func (l *Loaded) Close() {
	var wg sync.WaitGroup
	for _, p := range l.Plugins {
		wg.Add(1)
		go func() { defer wg.Done(); p.Close() }()
	}
	wg.Wait()
}

// Load launches the plugins in parallel, each constructing its tools as
// soon as it has started (constructors may call back into the host), and
// returns the outcome in spec order, so names and errors do not depend on
// timing: the launch failures first, then each plugin's load failures. A
// plugin that fails to launch or load is a failure; the others load.
func Load(ctx context.Context, specs []Spec, opts Options) *Loaded {
	errs := make([]error, len(specs))
	loads := make([]pluginLoad, len(specs))
	var wg sync.WaitGroup
	for i, sp := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if opts.Pool != nil {
				lease, err := opts.Pool.Acquire(ctx, sp.launchConfig())
				if err != nil {
					errs[i] = err
					return
				}
				loads[i] = load(ctx, sp, lease.Process, opts, lease)
				return
			}
			if opts.Declarations != nil {
				if l, ok := loadDeclared(sp, opts); ok {
					loads[i] = l
					return
				}
			}
			p, err := Launch(ctx, sp.launchConfig())
			if err != nil {
				errs[i] = err
				return
			}
			loads[i] = load(ctx, sp, p, opts, Lease{})
		}()
	}
	wg.Wait()
	l := &Loaded{}
	for i, err := range errs {
		var le *Error
		switch {
		case err == nil:
		case errors.Is(err, ErrStartTimeout) && errors.As(err, &le):
			after := specs[i].launchConfig().StartTimeout
			if after <= 0 {
				after = DefaultStartTimeout
			}
			l.TimedOut.add(le.Plugin, after)
		default:
			l.Failures = append(l.Failures, err.Error())
		}
	}
	for _, r := range loads {
		l.Failures = append(l.Failures, r.failures...)
		l.Status = append(l.Status, r.status...)
		if r.plugin != nil {
			l.Plugins = append(l.Plugins, r.plugin)
		}
	}
	return l
}

// launchConfig is the Config of every launch of the plugin: the host
// enforces the grace period, and the SDK in the plugin is told the same one.
func (sp Spec) launchConfig() Config {
	cfg := sp.Config
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.CancelGrace <= 0 {
		cfg.CancelGrace = supervise.DefaultGrace
	}
	return cfg
}

type pluginLoad struct {
	plugin   *Plugin // nil if no tool loaded
	status   []Status
	failures []string
}

// load asks the started process to construct the tools sp wants and puts
// it under supervision. A process with nothing to load is closed. A shared
// process (lease.Sup) is supervised by its pool; the session loads its
// tools under a load id of its own, and gives the process back on Close.
func load(ctx context.Context, sp Spec, first *Process, opts Options, lease Lease) (out pluginLoad) {
	pr := prepare(sp, first.Tools, opts)
	out.failures = pr.failures
	p := pr.plugin
	if lease.Sup != nil {
		p.sup, p.release = lease.Sup, lease.Release
		p.loadID = fmt.Sprintf("%s/%s/%d", opts.SessionID, sp.Name, loadIDs.Add(1))
		p.req.LoadID = p.loadID
	} else {
		p.sup = supervise.New(supervise.Config[*Process]{
			Name: "plugin " + sp.Name, Start: p.start, Backoff: opts.RestartBackoff,
			Grace: p.cfg.CancelGrace, Logger: p.cfg.Logger,
		}, first)
	}
	keep := false
	defer func() {
		if !keep {
			p.Close()
		}
	}()
	if len(pr.toLoad) == 0 {
		return out
	}
	if pr.stateErr != nil {
		out.failures = append(out.failures, fmt.Sprintf("%s (state dir: %v)", sp.Name, pr.stateErr))
		return out
	}
	loads, err := p.load(ctx, first)
	if err != nil {
		out.failures = append(out.failures, fmt.Sprintf("%s (load: %v)", sp.Name, err))
		return out
	}
	p.loadedOn = first
	p.started.Store(true)
	rows, failures := pr.statuses(loads, first.Path, opts)
	out.status, out.failures = rows, append(out.failures, failures...)
	if opts.Declarations != nil && lease.Sup == nil && len(out.failures) == 0 {
		pr.record(opts, first, loads)
		if len(p.loaded) == 0 {
			// Nothing to call: the process is not needed before a restart
			// would be (never); its statuses stand.
			p.sup.Close()
			p.sup = supervise.NewIdle(supervise.Config[*Process]{Name: "plugin " + sp.Name, Start: p.start})
		}
	}
	// A plugin whose every tool was skipped stays, as before: a skip is
	// not a failure, and its status rows name its process.
	keep = true
	out.plugin = p
	return out
}

// prepared is a plugin ready to load the tools its spec wants of those
// its binary declared.
type prepared struct {
	sp        Spec
	plugin    *Plugin
	described map[string]pluginrpc.ToolSpec
	toLoad    []string
	configs   map[string]string
	failures  []string
	stateErr  error
}

// prepare says which of the declared tools sp wants (a wanted tool that
// is not declared, or whose declaration is over the limits, is a failure)
// and makes the Plugin that loads them, with no process yet.
func prepare(sp Spec, tools []pluginrpc.ToolSpec, opts Options) (pr prepared) {
	pr.sp = sp
	described := map[string]pluginrpc.ToolSpec{}
	var all []string
	for _, t := range tools {
		described[t.Name] = t
		all = append(all, t.Name)
	}
	want := sp.Tools
	if want == nil {
		for _, name := range all {
			if !slices.Contains(sp.Exclude, name) {
				want = append(want, name)
			}
		}
	}
	var toLoad []string
	for _, name := range want {
		d, ok := described[name]
		if !ok {
			pr.failures = append(pr.failures, fmt.Sprintf("%s:%s (plugin %s has no tool %s; it offers %s)", sp.Name, name, sp.Name, name, strings.Join(all, ", ")))
			continue
		}
		if err := checkSpec(sp.Name, d); err != nil {
			pr.failures = append(pr.failures, fmt.Sprintf("%s:%s (%v)", sp.Name, name, err))
			continue
		}
		toLoad = append(toLoad, name)
	}
	p := &Plugin{name: sp.Name, cfg: sp.launchConfig()}
	pr.plugin, pr.described, pr.toLoad = p, described, toLoad

	configs := map[string]json.RawMessage{}
	wireConfigs := map[string]string{}
	for _, name := range toLoad {
		if sp.ConfigFor == nil {
			break
		}
		if c := sp.ConfigFor(name); c != nil {
			configs[name] = c
			wireConfigs[name] = string(c)
		}
	}
	// A plugin whose tools declare no capability is served none (needCaps).
	declared := map[string][]string{}
	for _, name := range toLoad {
		declared[name] = described[name].Capabilities
	}
	var stateDir string
	if opts.StateDir != "" && len(toLoad) > 0 {
		stateDir = filepath.Join(opts.StateDir, "plugins", sp.Name)
		pr.stateErr = os.MkdirAll(stateDir, 0o700)
	}
	p.stateDir = stateDir
	terminal := opts.Terminal
	var bounds *capability.Bounds
	if sb := sp.Config.Sandbox; sb != nil {
		// The editor works outside the plugin's sandbox: a confined
		// plugin's editor reads and writes are held to its sandbox's
		// folders, and it runs commands itself, under its sandbox.
		bounds, terminal = &capability.Bounds{Read: sb.Read, Write: sb.Write}, nil
	}
	p.host = &capability.Host{
		Plugin:  sp.Name,
		Decider: opts.Decider,
		Env:     opts.Env,
		Session: capability.Session{ID: opts.SessionID, WorkDir: opts.WorkDir, StateDir: stateDir},
		Configs: configs,
		// A capability request must cite a call in progress on this
		// plugin, whose tool declared the capability.
		Calls:    &p.calls,
		Declared: declared,
		// Every plugin gets the Progress capability's sinks; a plugin built
		// before it existed never reports to them.
		Progress:     &capability.ProgressSinks{},
		Questions:    opts.Questions,
		Model:        opts.Model,
		Editor:       opts.Editor,
		EditorBounds: bounds,
		Terminal:     terminal,
	}
	p.req = pluginrpc.LoadRequest{
		Session:     pluginrpc.Session{ID: opts.SessionID, WorkDir: opts.WorkDir, StateDir: stateDir},
		Tools:       toLoad,
		ToolConfigs: wireConfigs,
	}
	pr.configs = wireConfigs
	for _, name := range toLoad {
		if len(described[name].Capabilities) > 0 {
			p.needCaps = true
		}
	}
	return pr
}

// statuses are the status rows of the tools as they loaded (path is the
// binary's), and the failures of those that did not; the tools that
// loaded become p.loaded.
func (pr *prepared) statuses(loads []pluginrpc.ToolLoad, path string, opts Options) (rows []Status, failures []string) {
	sp, p, described := pr.sp, pr.plugin, pr.described
	for _, tl := range loads {
		d := described[tl.Name]
		// A reason is one line of a status or an error.
		tl.Reason, _ = limits.Cut(tl.Reason, limits.BriefChars)
		st := Status{Name: tl.Name, Plugin: sp.Name, Path: path, Capabilities: d.Capabilities, Reason: tl.Reason,
			Source: sp.source(path)}
		switch tl.Status {
		case pluginrpc.StatusLoaded:
			st.Status = "loaded"
			p.loaded = append(p.loaded, d.Name)
			st.Tool = &tool{plugin: p, onProgress: opts.OnProgress, spec: toolset.Spec{
				Name: d.Name, Description: d.Description, Parameters: d.ParametersSchema,
				Source: sp.source(path), Capabilities: d.Capabilities,
				Timeout:      callTimeout(d.DefaultTimeout, sp.Timeout),
				RuleArgument: d.RuleArgument,
			}, annotations: toolset.Annotations(d.Annotations)}
		case pluginrpc.StatusSkipped:
			st.Status = "skipped"
			p.cfg.Logger.Info(fmt.Sprintf("Skipping tool %s: %s", tl.Name, tl.Reason))
		default:
			failures = append(failures, fmt.Sprintf("%s:%s (%s)", sp.Name, tl.Name, tl.Reason))
			continue
		}
		rows = append(rows, st)
	}
	return rows, failures
}

func callTimeout(toolDefault, override time.Duration) time.Duration {
	d := DefaultCallTimeout
	if toolDefault > 0 {
		d = toolDefault
	}
	if override > 0 {
		d = override
	}
	return min(d, MaxCallTimeout)
}

// Plugin is a plugin binary under supervision, its tools loaded: a process
// that stops is restarted for the next call and loads the same tools again
// (see host/supervise for the policy).
type Plugin struct {
	name string
	cfg  Config
	sup  *supervise.Supervisor[*Process]
	host *capability.Host
	// req is the Load request, sent again after each restart with the new
	// broker id.
	req      pluginrpc.LoadRequest
	needCaps bool
	// calls are the calls in progress on this plugin.
	calls calls
	// loaded are the tools that loaded at first; a restart must load them again.
	loaded []string
	// stateDir is the plugin's state dir in the session ("" = none), where
	// the full text of a result the host cut is saved.
	stateDir string

	// A shared process (Pool): release gives it back, loadID names the
	// session's load in it. Both are zero for a process of its own.
	release func()
	loadID  string
	// mu guards loadedOn, the process the session's tools were loaded
	// into (a shared process restarted by its pool needs a new Load), and
	// stopHost, which stops serving the capabilities of that load.
	mu       sync.Mutex
	loadedOn *Process
	stopHost func()
	closed   sync.Once

	// started: a process of the plugin has started (a later start is a
	// restart).
	started atomic.Bool
	// decl is the declaration a plugin not started at Load was loaded
	// from; nil for one that started at Load.
	decl *declared
}

// loadIDs numbers the loads of shared processes.
var loadIDs atomic.Uint64

// Name is the plugin's name.
func (p *Plugin) Name() string { return p.name }

// Current is the running process, or nil.
func (p *Plugin) Current() *Process {
	cur, _ := p.sup.Current()
	return cur
}

// Shared reports whether the plugin's process is shared with other
// sessions (see Pool).
func (p *Plugin) Shared() bool { return p.release != nil }

// Close stops the plugin for good: its own process, or, for a shared one,
// the session's load in it (the pool stops the process once its last
// session is done).
func (p *Plugin) Close() {
	if p.release == nil {
		p.sup.Close()
		return
	}
	p.closed.Do(func() {
		p.mu.Lock()
		on, stop := p.loadedOn, p.stopHost
		p.loadedOn, p.stopHost = nil, nil
		p.mu.Unlock()
		if on != nil && !on.Exited() {
			ctx, cancel := context.WithTimeout(context.Background(), unloadTimeout)
			if err := on.rpc.Unload(ctx, p.loadID); err != nil {
				p.cfg.Logger.Debug("unload", "plugin", p.name, "error", err)
			}
			cancel()
		}
		if stop != nil {
			stop()
		}
		p.release()
	})
}

// unloadTimeout bounds the Unload of a session's load from a shared process.
const unloadTimeout = 5 * time.Second

// loadAttempts bounds the Loads of a session into a shared process whose
// dial of the session's capability server timed out (see load).
const loadAttempts = 3

// load sends the Load request to a process, serving the host capabilities
// on its broker first when its tools need some.
//
// A shared process may get many Loads at once (a server opening dozens of
// sessions), each with a brokered capability server of its own; go-plugin's
// broker gives the plugin 5 s to learn where one listens, which a starved
// machine can miss. Such a Load, which constructed nothing, is sent again
// with a new brokered server.
func (p *Plugin) load(ctx context.Context, cur *Process) ([]pluginrpc.ToolLoad, error) {
	for attempt := 1; ; attempt++ {
		loads, err := p.loadOnce(ctx, cur)
		if err == nil || p.release == nil || attempt == loadAttempts || ctx.Err() != nil ||
			!strings.Contains(err.Error(), pluginrpc.DialHostFailed) {
			return loads, err
		}
		p.cfg.Logger.Warn("load again: the plugin could not reach the session's capability server", "plugin", p.name, "error", err)
	}
}

func (p *Plugin) loadOnce(ctx context.Context, cur *Process) ([]pluginrpc.ToolLoad, error) {
	req := p.req
	// A brokered server nobody dials would wait for nothing: serve only to
	// plugins whose tools ask for capabilities.
	if p.needCaps {
		if p.release != nil {
			// A shared process outlives the session's load: its capability
			// server stops with the load.
			id, stop := cur.rpc.ServeHostStoppable(p.host)
			req.CapabilityBrokerID, req.Capabilities = id, p.host.Offered()
			if p.stopHost != nil {
				p.stopHost()
			}
			p.stopHost = stop
		} else {
			req.CapabilityBrokerID, req.Capabilities = cur.rpc.ServeHost(p.host), p.host.Offered()
		}
	}
	lctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	return cur.rpc.Load(lctx, req)
}

// loadedInto makes sure the session's tools are loaded into cur, the
// shared process its pool runs now: after a restart, the session loads
// them again before its next call.
func (p *Plugin) loadedInto(ctx context.Context, cur *Process) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.loadedOn == cur {
		return nil
	}
	loads, err := p.load(ctx, cur)
	if err == nil {
		err = p.reloaded(loads)
	}
	if err != nil {
		return fmt.Errorf("plugin %s: its process was restarted and the session's tools could not be loaded again: %w", p.name, err)
	}
	p.loadedOn = cur
	return nil
}

// reloaded says which of the tools that loaded at first did not load again.
func (p *Plugin) reloaded(loads []pluginrpc.ToolLoad) error {
	var missing []string
	for _, name := range p.loaded {
		if !slices.ContainsFunc(loads, func(tl pluginrpc.ToolLoad) bool {
			return tl.Name == name && tl.Status == pluginrpc.StatusLoaded
		}) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("tools %s did not load again", strings.Join(missing, ", "))
	}
	return nil
}

// start launches a new process and loads the tools that loaded at first;
// the supervisor calls it to restart the plugin.
//
// A plugin loaded from its declaration (lazy.go) starts here at its first
// call: what the binary declares must be what the model was offered, and
// the tools offered must load.
func (p *Plugin) start(ctx context.Context) (*Process, error) {
	cur, err := Launch(ctx, p.cfg)
	if err != nil {
		return nil, err
	}
	if err := p.decl.check(p.name, cur.Tools, p.loaded); err != nil {
		cur.Kill()
		return nil, err
	}
	loads, err := p.load(ctx, cur)
	if err != nil {
		cur.Kill()
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := p.reloaded(loads); err != nil {
		cur.Kill()
		p.decl.stale()
		return nil, err
	}
	if p.started.Swap(true) {
		telemetry.PluginRestarted(ctx, p.name)
	}
	return cur, nil
}

// Environment describes this machine for the Environment capability.
func Environment(workDir string, getenv func(string) string) capability.Environment {
	shellPath := getenv("SHELL")
	if shellPath == "" {
		shellPath = "/bin/sh"
		if _, err := os.Stat("/bin/bash"); err == nil {
			shellPath = "/bin/bash"
		}
	}
	if runtime.GOOS == "windows" {
		shellPath = "powershell.exe"
	}
	return capability.Environment{OS: runtime.GOOS, ShellName: filepath.Base(shellPath), ShellPath: shellPath, WorkDir: workDir}
}
