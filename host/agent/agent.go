// Package agent loads an agent: it reads the spec and merges the tools of
// its sources into one toolset: plugin binaries (host/plugin) and MCP
// servers (host/mcpclient), started in parallel. (Subagents are added by
// the run command, host/subagent.)
package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// applyLock pins the plugins that agent.yaml leaves unpinned with the pins
// of the agent's lock file (agent.lock.yaml), if there is one.
func applyLock(s *spec.Spec, refs []spec.PluginRef) error {
	lock, err := pins.Read(pins.PathFor(s.Path))
	if err != nil {
		return err
	}
	for i := range refs {
		if p, ok := lock.Plugins[refs[i].Name]; ok && refs[i].SHA256 == "" {
			refs[i].SHA256 = p.SHA256
		}
	}
	return nil
}

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
	Decider   approval.Decider
	Logger    hclog.Logger
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
	// MCPConfigFiles are MCP config files (--mcp-config-file) whose servers
	// are loaded besides the spec's mcp_servers.
	MCPConfigFiles []string
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
	Spec    *spec.Spec
	Toolset *toolset.Toolset
	Plugins []*plugin.Plugin
	Status  []ToolStatus
	// MCP are the agent's MCP servers.
	MCP *mcpclient.Loaded
}

// Close stops every plugin.
func (a *Agent) Close() {
	var wg sync.WaitGroup
	for _, p := range a.Plugins {
		wg.Add(1)
		go func() { defer wg.Done(); p.Close() }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); a.MCP.Close() }()
	wg.Wait()
}

// LoadError lists every tool that could not be loaded.
type LoadError struct {
	Failures []string
}

func (e *LoadError) Error() string { return "Invalid tools: [" + strings.Join(e.Failures, "; ") + "]" }

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
	if err := applyLock(s, refs); err != nil {
		return nil, err
	}
	waitMCP, err := startMCP(ctx, s, opts) // in parallel with the plugins
	if err != nil {
		return nil, err
	}
	var failures []string
	var specs []plugin.Spec
	builtin := map[string]bool{}
	for _, ref := range refs {
		res, err := Resolve(ref, opts.PluginDirs, opts.Builtins)
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		specs = append(specs, pluginSpec(ref, res, opts))
		builtin[ref.Name] = res.Builtin
	}
	a := &Agent{Spec: s, Toolset: toolset.New(opts.Logger)}
	loaded := plugin.Load(ctx, specs, plugin.Options{
		SessionID: opts.SessionID, WorkDir: opts.WorkDir, StateDir: opts.StateDir, Decider: opts.Decider,
		Env: plugin.Environment(opts.WorkDir, opts.Getenv), Calls: a.Toolset, RestartBackoff: opts.RestartBackoff, OnProgress: opts.OnProgress,
	})
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
	if len(failures) > 0 {
		a.Close()
		return nil, &LoadError{Failures: failures}
	}
	var names []string
	for _, st := range a.Status {
		if st.Status == "loaded" {
			names = append(names, st.Name)
		}
	}
	opts.Logger.Info(fmt.Sprintf("Loaded tools: [%s]", strings.Join(names, ", ")))
	return a, nil
}

// pluginSpec says how to load the plugin ref names, found as res.
func pluginSpec(ref spec.PluginRef, res Resolved, opts Options) plugin.Spec {
	sp := plugin.Spec{
		Source: res.Source(ref.Name),
		Config: plugin.Config{
			Name: ref.Name, Path: res.Path, Args: res.Args, Builtin: res.Builtin, SHA256: ref.SHA256, Env: ref.Env,
			StartTimeout: opts.StartTimeout, Logger: opts.Logger, Getenv: opts.Getenv, CancelGrace: opts.CancelGrace,
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
// the background; the function returned waits for them. Only a config error
// (a bad config file, a name given twice) is returned here.
func startMCP(ctx context.Context, s *spec.Spec, opts Options) (func() *mcpclient.Loaded, error) {
	cfgs, err := mcpclient.Configs(s, opts.MCPConfigFiles)
	if err != nil {
		return nil, err
	}
	done := make(chan *mcpclient.Loaded, 1)
	go func() {
		done <- mcpclient.LoadAll(ctx, cfgs, mcpclient.Options{Decider: opts.Decider, Logger: opts.Logger,
			Getenv: opts.Getenv, WorkDir: opts.WorkDir, RestartBackoff: opts.RestartBackoff, CancelGrace: opts.CancelGrace,
			OnProgress: opts.OnProgress})
	}()
	return func() *mcpclient.Loaded { return <-done }, nil
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
		row := ToolStatus{Name: st.Name, Status: "loaded", Capabilities: []string{}, Source: st.Source, MCPServer: st.Server}
		if st.Name == "" {
			row.Name = "mcp:" + st.Server
		}
		if st.Tool != nil {
			if err := a.Toolset.Add(st.Tool); err != nil {
				if _, clash := a.Toolset.Find(st.Name); clash {
					failures = append(failures, fmt.Sprintf("%s (%v)", st.Name, err))
					continue
				}
				st.Err = err
			}
		}
		if st.Err != nil {
			row.Status, row.Reason = "failed", st.Err.Error()
		}
		a.Status = append(a.Status, row)
	}
	if len(failures) == 0 {
		a.watchMCP(logger)
	}
	return failures
}

// watchMCP keeps the toolset in step with servers whose tools change while
// the agent runs (notifications/tools/list_changed): a server's old tools
// are replaced by its new ones, from the next step on. A new tool whose name
// is taken is left out with a warning. Status keeps the tools as loaded.
func (a *Agent) watchMCP(logger hclog.Logger) {
	for _, srv := range a.MCP.Servers {
		var current []string
		for _, st := range a.Status {
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
