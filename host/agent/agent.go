// Package agent loads an agent: it reads the spec and merges the tools of
// its sources into one toolset: plugin binaries (host/plugin) and MCP
// servers (host/mcpclient), started in parallel. (The Agent tool of
// subagents is added by host/conversation.)
package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/capability"
	"github.com/kosong-host/kosong-host/host/declcache"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// applyLock pins the plugins that the agent file leaves unpinned with the
// pins of the run's lock file (lockFile; "" is the one beside the agent
// file), if there is one, and returns the names it pinned.
func applyLock(s *spec.Spec, refs []spec.PluginRef, lockFile string) (map[string]bool, error) {
	if lockFile == "" {
		lockFile = pins.PathFor(s.Path)
	}
	lock, err := pins.Read(lockFile)
	if err != nil {
		return nil, err
	}
	pinned := map[string]bool{}
	for i := range refs {
		if p, ok := lock.Plugins[refs[i].Name]; ok && refs[i].SHA256 == "" {
			refs[i].SHA256 = p.SHA256
			pinned[refs[i].Name] = true
		}
	}
	return pinned, nil
}

// Model are the facts of the session's model that plugins with the Model
// capability are told.
type Model = capability.Model

// Options say how to load an agent.
type Options struct {
	// DefaultAgentPath is the file `extend: default` names.
	DefaultAgentPath string
	// PluginDirs are searched in order for kosong-plugin-NAME.
	PluginDirs []string
	// Builtins are the plugins the host binary serves itself, by bare
	// name; a bare name not found in PluginDirs is looked up here.
	Builtins map[string]Builtin
	WorkDir  string
	// SessionID and StateDir identify the session; each plugin gets
	// StateDir/plugins/NAME.
	SessionID string
	StateDir  string
	// PluginPool, when set, hands out the plugin processes (plugin.Pool).
	PluginPool plugin.Pool
	Decider    approval.Decider
	Logger     hclog.Logger
	// StartTimeout bounds each plugin's handshake.
	StartTimeout time.Duration
	// CancelGrace is how long a plugin or an MCP server may take to answer
	// after a call of its was cancelled or timed out before the host kills
	// it, to be restarted; 0 is supervise.DefaultGrace.
	CancelGrace time.Duration
	// OnProgress receives the progress reports of tool calls that make
	// them (MCP servers, plugin tools with the Progress capability), from any
	// goroutine.
	OnProgress func(toolset.Progress)
	// RestartBackoff is the delay before the second restart of a stopped
	// plugin or MCP server in a window, doubled for each further one (the
	// first restart is immediate); 0 means supervise.DefaultBackoff.
	RestartBackoff time.Duration
	Getenv         func(string) string
	// Launcher is the command plugins and stdio MCP servers are started
	// through (see proc.Command); nil starts them directly.
	Launcher []string
	// MCPStartupWait bounds how long the load waits for MCP servers: one
	// still starting then (within its own startup_timeout) does not hold
	// up the agent; its tools join the toolset when it is up. 0 waits for
	// each server's start.
	MCPStartupWait time.Duration
	// LockFile is the run's lock file (LockFileFor the top agent file),
	// which pins the plugins of the subagents too; "" is the one beside
	// the agent file loaded.
	LockFile string
	// Questions answers the questions of plugin tools (UserInput); nil
	// when no one can answer, and such tools are skipped.
	Questions approval.UserInput
	// Model are the selected model's facts (Model capability); nil when
	// unknown.
	Model *Model
	// Editor is the editor's files (Editor capability); nil offers none.
	Editor capability.Editor
	// Terminal is the editor's terminal (Terminal capability); nil offers
	// none.
	Terminal capability.Terminal
	// MCPConfigFiles are MCP config files (--mcp-config-file) whose servers
	// are loaded besides the spec's mcp_servers.
	MCPConfigFiles []string
	// SecretEnv are more provider key variables than the built-in ones
	// (spec.SecretEnv): the api_key_env names of the configuration file.
	// A plugin whose env names one, or an MCP server whose env or headers
	// expand one, is refused unless its entry says allow_secrets: true.
	SecretEnv []string
	// Declarations, when set, is the declaration cache: plugins start at
	// their first call (plugin.Options.Declarations); nil starts every
	// plugin at the load.
	Declarations declcache.Store
	// SandboxExec is the binary that serves `sandbox-exec` (the host's own),
	// through which sandboxed plugins are launched; "" = plugins cannot be
	// confined (a required sandbox then fails the load).
	SandboxExec string
}

// ToolStatus is the load outcome of one tool.
type ToolStatus struct {
	Name         string   `json:"name"`
	Plugin       string   `json:"plugin"`
	Path         string   `json:"path"`
	Status       string   `json:"status"` // loaded, skipped, failed (MCP)
	Reason       string   `json:"reason,omitempty"`
	Capabilities []string `json:"capabilities"`
	// Source is where the tool comes from: "plugin NAME (PATH)", "builtin NAME" or
	// "mcp server NAME (COMMAND ARGS | URL)".
	Source string `json:"source"`
	// MCPServer names the tool's MCP server ("" for plugin tools).
	MCPServer string `json:"mcp_server,omitempty"`
	// Builtin is true for the tools of a plugin the host binary serves
	// (Path is then the host binary).
	Builtin bool `json:"builtin,omitempty"`
}

// Agent is a loaded agent.
type Agent struct {
	Spec *spec.Spec
	// Source says which spec file is in use and how it was found; the
	// command that found it sets it (see Find).
	Source  Source
	Toolset *toolset.Toolset
	Plugins []*plugin.Plugin
	// Status is the load outcome of each tool as the load returned; the
	// rows of MCP servers that came up later are in Statuses.
	Status []ToolStatus
	// MCP are the agent's MCP servers.
	MCP *mcpclient.Loaded
	// Overridden are the built-in plugins that installed binaries replace
	// with no pin (in the agent file or the lock file) to say which binary
	// is meant, as the load left them: said in one line (OverrideNotice)
	// wherever the agent runs. Overrides has them after reloads too.
	Overridden []Override

	// mu guards Spec, Plugins and Status while a reload swaps them, and
	// late.
	mu          sync.Mutex
	late        []ToolStatus // rows of MCP servers that started after the load
	overridden  []Override   // Overridden, after the last reload that took effect
	rl          *reloader
	watchOpts   ReloadOptions
	watchReport func(*Reloaded, error)
}

// Statuses is Status with the rows of the MCP servers that started after
// the load returned.
func (a *Agent) Statuses() []ToolStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append(slices.Clone(a.Status), a.late...)
}

// Overrides is Overridden as of the last reload that took effect.
func (a *Agent) Overrides() []Override {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.overridden)
}

// WaitMCP waits until no MCP server is still starting (each within its
// startup_timeout), or ctx ends: then Statuses lists every tool.
func (a *Agent) WaitMCP(ctx context.Context) error { return a.MCP.Wait(ctx) }

// Close stops every plugin, those of a reload not yet in effect too.
func (a *Agent) Close() {
	if a.rl != nil {
		a.ApplyPending()
		a.rl.closing.Wait()
	}
	var wg sync.WaitGroup
	for _, p := range a.Plugins {
		wg.Add(1)
		go func() { defer wg.Done(); p.Close() }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); a.MCP.Close() }()
	wg.Wait()
}

// LoadError lists every tool that could not be loaded, and the plugins
// that did not start within the start timeout.
type LoadError struct {
	Failures []string
	TimedOut plugin.StartTimeouts
}

func (e *LoadError) Error() string {
	var parts []string
	if len(e.Failures) > 0 {
		parts = append(parts, "Invalid tools: ["+strings.Join(e.Failures, "; ")+"]")
	}
	if len(e.TimedOut.Plugins) > 0 {
		parts = append(parts, e.TimedOut.String())
	}
	return strings.Join(parts, "; ")
}

// Load reads the spec at path and loads its tools.
func Load(ctx context.Context, path string, opts Options) (*Agent, error) {
	s, err := spec.Load(path, spec.LoadOptions{DefaultAgentPath: opts.DefaultAgentPath})
	if err != nil {
		return nil, err
	}
	return LoadSpec(ctx, s, opts)
}

// LoadSpec starts the spec's plugins and MCP servers in parallel and builds
// the toolset. Failures are collected and returned together as a
// *LoadError.
func LoadSpec(ctx context.Context, s *spec.Spec, opts Options) (*Agent, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	refs, err := s.Plugins()
	if err != nil {
		return nil, err
	}
	specs, builtin, failures, err := pluginSpecs(s, refs, opts)
	if err != nil {
		return nil, err
	}
	waitMCP, refused, err := startMCP(ctx, s, opts) // in parallel with the plugins
	if err != nil {
		return nil, err
	}
	failures = append(failures, refused...)
	a := &Agent{Spec: s, Toolset: toolset.New(opts.Logger), Overridden: overridden(refs, opts)}
	a.overridden = a.Overridden
	loaded := plugin.Load(ctx, specs, opts.pluginOptions())
	a.Plugins = loaded.Plugins
	failures = append(failures, loaded.Failures...)
	for _, st := range loaded.Status {
		if st.Tool != nil {
			if err := a.Toolset.Add(st.Tool); err != nil {
				failures = append(failures, fmt.Sprintf("%s:%s (%v)", st.Plugin, st.Name, err))
				continue
			}
		}
		a.Status = append(a.Status, ToolStatus{Name: st.Name, Plugin: st.Plugin, Path: st.Path, Status: st.Status,
			Reason: st.Reason, Capabilities: st.Capabilities, Source: st.Source, Builtin: builtin[st.Plugin]})
	}
	failures = append(failures, a.addMCP(waitMCP(), opts.Logger)...)
	if len(failures) > 0 || len(loaded.TimedOut.Plugins) > 0 {
		a.Close()
		return nil, &LoadError{Failures: failures, TimedOut: loaded.TimedOut}
	}
	a.MCP.Late(func(l *mcpclient.Loaded) { a.addLateMCP(l, opts.Logger) })
	var names []string
	for _, st := range a.Status {
		if st.Status == "loaded" {
			names = append(names, st.Name)
		}
	}
	opts.Logger.Info(fmt.Sprintf("Loaded tools: [%s]", strings.Join(names, ", ")))
	a.rl = newReloader(opts, s, refs, a)
	return a, nil
}

// pluginSpecs says how to load the plugins refs name (of agent file s):
// resolved, pinned (by the file or the run's lock file) and confined; a
// reference that does not resolve is a failure, an invalid lock file or
// sandbox an error. builtin says which plugins the host binary serves.
func pluginSpecs(s *spec.Spec, refs []spec.PluginRef, opts Options) (specs []plugin.Spec, builtin map[string]bool, failures []string, err error) {
	if err := spec.CheckSecrets(refs, nil, opts.SecretEnv); err != nil {
		return nil, nil, nil, err
	}
	fromLock, err := applyLock(s, refs, opts.LockFile)
	if err != nil {
		return nil, nil, nil, err
	}
	confined, err := sandboxes(refs, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	builtin = map[string]bool{}
	for _, ref := range refs {
		if ref.Remote != nil {
			sp, err := remoteSpec(ref, opts)
			if err != nil {
				failures = append(failures, err.Error())
				continue
			}
			specs = append(specs, sp)
			continue
		}
		res, err := Resolve(ref, opts.PluginDirs, opts.Builtins)
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		sp := pluginSpec(ref, res, opts)
		if res.Builtin && fromLock[ref.Name] {
			// A built-in is part of the host: a lock file's hash of an
			// older (or a teammate's) host binary does not pin it.
			sp.Config.SHA256 = ""
		} else if fromLock[ref.Name] {
			sp.Config.LockFile = opts.LockFile
			if sp.Config.LockFile == "" {
				sp.Config.LockFile = pins.PathFor(s.Path)
			}
		}
		sp.Config.Sandbox, sp.Config.SandboxExec = confined[ref.Name], opts.SandboxExec
		specs = append(specs, sp)
		builtin[ref.Name] = res.Builtin
	}
	return specs, builtin, failures, nil
}

// pluginOptions are what the agent's plugins share. Each plugin tracks its
// own calls in progress, for the capabilities it is served.
func (opts Options) pluginOptions() plugin.Options {
	return plugin.Options{
		SessionID: opts.SessionID, WorkDir: opts.WorkDir, StateDir: opts.StateDir, Decider: opts.Decider,
		Env: plugin.Environment(opts.WorkDir, opts.Getenv), RestartBackoff: opts.RestartBackoff,
		OnProgress: opts.OnProgress, Questions: opts.Questions, Model: opts.Model, Editor: opts.Editor, Terminal: opts.Terminal,
		Pool: opts.PluginPool, Declarations: opts.Declarations,
	}
}

// pluginSpec says how to load the plugin ref names, found as res.
func pluginSpec(ref spec.PluginRef, res Resolved, opts Options) plugin.Spec {
	sp := plugin.Spec{
		Source: res.Source(ref.Name),
		Config: plugin.Config{
			Name: ref.Name, Path: res.Path, Args: res.Args, Builtin: res.Builtin, SHA256: ref.SHA256, Env: ref.Env,
			StartTimeout: opts.StartTimeout, Logger: opts.Logger, Getenv: opts.Getenv, CancelGrace: opts.CancelGrace,
			Launcher: opts.Launcher,
		},
		Tools: ref.Tools, Exclude: ref.Exclude, Timeout: ref.Timeout, ConfigFor: ref.ConfigFor,
	}
	return sp
}

// ResolvePlugin finds a plugin's binary: a path as given, or
// kosong-plugin-NAME in the plugin dirs.
func ResolvePlugin(ref spec.PluginRef, dirs []string) (string, error) {
	if ref.Path != "" {
		return ref.Path, nil
	}
	file := spec.PluginPrefix + ref.Lookup
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	for _, dir := range dirs {
		p := filepath.Join(dir, file)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("plugin %s: %s not found: no plugin directory is set (--plugin-dir, KOSONG_PLUGIN_PATH)", ref.Name, file)
	}
	return "", fmt.Errorf("plugin %s: %s not found in %s", ref.Name, file, strings.Join(dirs, ", "))
}

// ---- MCP servers (host/mcpclient) ----

// startMCP starts the MCP servers of the spec and of opts.MCPConfigFiles in
// the background; the function returned waits for them. A stdio server
// whose command the run's lock file pins to another file is refused (not
// started, and a failure of the load, as a plugin's mismatch is). Only a
// config error (a bad config or lock file, a name given twice) is
// returned as an error.
func startMCP(ctx context.Context, s *spec.Spec, opts Options) (func() *mcpclient.Loaded, []string, error) {
	cfgs, err := mcpclient.Configs(s, opts.MCPConfigFiles)
	if err != nil {
		return nil, nil, err
	}
	if err := spec.CheckSecrets(nil, cfgs, opts.SecretEnv); err != nil {
		return nil, nil, err
	}
	confined, err := mcpSandboxes(cfgs, s.Sandbox, opts)
	if err != nil {
		return nil, nil, err
	}
	pinned, err := mcpPins(s, opts.LockFile)
	if err != nil {
		return nil, nil, err
	}
	var refused []string
	cfgs = slices.DeleteFunc(cfgs, func(cfg spec.MCPServer) bool {
		if cfg.Disabled {
			return false
		}
		if err := mcpclient.CheckPin(cfg, pinned[cfg.Name]); err != nil {
			refused = append(refused, err.Error())
			return true
		}
		return false
	})
	done := make(chan *mcpclient.Loaded, 1)
	go func() {
		done <- mcpclient.LoadAll(ctx, cfgs, mcpclient.Options{Decider: opts.Decider, Logger: opts.Logger,
			Getenv: opts.Getenv, WorkDir: opts.WorkDir, RestartBackoff: opts.RestartBackoff, CancelGrace: opts.CancelGrace,
			OnProgress: opts.OnProgress, Launcher: opts.Launcher, StartupWait: opts.MCPStartupWait, Sandboxes: confined,
			Pins: pinned})
	}()
	return func() *mcpclient.Loaded { return <-done }, refused, nil
}

// mcpPins are the run's lock file's pins of MCP server commands (lockFile;
// "" is the one beside the agent file).
func mcpPins(s *spec.Spec, lockFile string) (map[string]mcpclient.Pin, error) {
	if lockFile == "" {
		lockFile = pins.PathFor(s.Path)
	}
	lock, err := pins.Read(lockFile)
	if err != nil {
		return nil, err
	}
	out := map[string]mcpclient.Pin{}
	for name, p := range lock.MCPServers {
		out[name] = mcpclient.Pin{SHA256: p.SHA256, LockFile: lockFile}
	}
	return out, nil
}

// addMCP adds the MCP tools after the plugins' and a status row for each:
// "loaded", or "failed" with the reason (a server that did not start is one
// row, "mcp:SERVER"), which does not fail the load. A tool name clash does:
// it is returned as a failure naming both sources. Plugin rows get their
// Source here too.
func (a *Agent) addMCP(l *mcpclient.Loaded, logger hclog.Logger) (failures []string) {
	a.MCP = l
	for i, st := range a.Status {
		if st.Source == "" {
			a.Status[i].Source = fmt.Sprintf("plugin %s (%s)", st.Plugin, st.Path)
		}
	}
	for _, st := range l.Status {
		if st.Tool != nil {
			if err := a.Toolset.Add(st.Tool); err != nil {
				if _, clash := a.Toolset.Find(st.Name); clash {
					failures = append(failures, fmt.Sprintf("%s (%v)", st.Name, err))
					continue
				}
				st.Err = err
			}
		}
		a.Status = append(a.Status, mcpRow(st))
	}
	if len(failures) == 0 {
		a.watchMCP(logger)
	}
	return failures
}

// mcpRow is the status row of one MCP load result: "loaded", or "failed"
// with the reason; a server that did not start is the row "mcp:SERVER".
func mcpRow(st mcpclient.Status) ToolStatus {
	row := ToolStatus{Name: st.Name, Status: "loaded", Capabilities: []string{}, Source: st.Source, MCPServer: st.Server}
	if st.Name == "" {
		row.Name = "mcp:" + st.Server
	}
	if st.Err != nil {
		row.Status, row.Reason = "failed", st.Err.Error()
	}
	return row
}

// addLateMCP adds the tools of a server that came up after the load: they
// join the toolset from the next step on. A name clash leaves the new tool
// out with a warning (the load has returned: nothing fails now).
func (a *Agent) addLateMCP(l *mcpclient.Loaded, logger hclog.Logger) {
	var rows []ToolStatus
	for _, st := range l.Status {
		if st.Tool != nil {
			if err := a.Toolset.Add(st.Tool); err != nil {
				logger.Warn("a tool of an MCP server that started late was not loaded", "server", st.Server, "error", err)
				st.Err = err
			}
		}
		rows = append(rows, mcpRow(st))
	}
	a.mu.Lock()
	a.late = append(a.late, rows...)
	a.mu.Unlock()
	if len(l.Servers) > 0 {
		logger.Info("MCP server started after the agent loaded; its tools join now", "server", l.Servers[0].Name())
	}
	a.watchServers(l.Servers, rows, logger)
}

// watchMCP keeps the toolset in step with servers whose tools change while
// the agent runs (notifications/tools/list_changed): a server's old tools
// are replaced by its new ones, from the next step on. A new tool whose name
// is taken is left out with a warning. Status keeps the tools as loaded.
func (a *Agent) watchMCP(logger hclog.Logger) { a.watchServers(a.MCP.Servers, a.Status, logger) }

func (a *Agent) watchServers(servers []*mcpclient.Server, status []ToolStatus, logger hclog.Logger) {
	for _, srv := range servers {
		var current []string
		for _, st := range status {
			if st.MCPServer == srv.Name() && st.Status == "loaded" {
				current = append(current, st.Name)
			}
		}
		srv.Watch(func(tools []*mcpclient.Tool) {
			add := make([]toolset.Tool, len(tools))
			for i, t := range tools {
				add[i] = t
			}
			errs := a.Toolset.Replace(current, add...)
			for _, err := range errs {
				logger.Warn("a tool of an MCP server was not loaded", "server", srv.Name(), "error", err)
			}
			current = current[:0]
			for _, t := range tools {
				if got, ok := a.Toolset.Find(t.Spec().Name); ok && got == toolset.Tool(t) {
					current = append(current, t.Spec().Name)
				}
			}
		})
	}
}
