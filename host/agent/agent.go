// Package agent loads an agent: its spec, its plugin binaries (launched in
// parallel, each handed the host capabilities over its broker) and the
// toolset made of their tools.
package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
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
	"github.com/kosong-host/kosong-host/host/launcher"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// Call timeouts: a tool's own default applies unless agent.yaml overrides
// it; either is capped by MaxCallTimeout.
const (
	DefaultCallTimeout = 10 * time.Minute
	MaxCallTimeout     = time.Hour
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

// DefaultRestartBackoff is the delay before the second restart of a plugin
// in RestartWindow; it doubles for each further one.
const DefaultRestartBackoff = 250 * time.Millisecond

// Options say how to load an agent.
type Options struct {
	// DefaultAgentPath is the file `extend: default` names.
	DefaultAgentPath string
	// PluginDirs are searched in order for kosong-plugin-NAME.
	PluginDirs []string
	WorkDir    string
	// SessionID and StateDir identify the session; each plugin gets
	// StateDir/plugins/NAME.
	SessionID string
	StateDir  string
	Decider   approval.Decider
	Logger    hclog.Logger
	// StartTimeout bounds each plugin's handshake.
	StartTimeout time.Duration
	// CancelGrace is how long a plugin's tool may run on after its call was
	// cancelled before the plugin exits to be restarted; 0 is the SDK's default.
	CancelGrace time.Duration
	// OnProgress receives the progress reports of tool calls that make
	// them (MCP servers, plugin tools with the Progress capability), from any
	// goroutine.
	OnProgress func(mcpclient.Progress)
	// RestartBackoff is the delay before the second restart of a stopped
	// plugin in a window, doubled for each further one (the first restart is
	// immediate); 0 means DefaultRestartBackoff.
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
	// Source is where the tool comes from: "plugin NAME (PATH)" or
	// "mcp server NAME (COMMAND ARGS | URL)".
	Source string `json:"source"`
	// MCPServer names the tool's MCP server ("" for plugin tools).
	MCPServer string `json:"mcp_server,omitempty"`
}

// Agent is a loaded agent.
type Agent struct {
	Spec    *spec.Spec
	Toolset *toolset.Toolset
	Plugins []*Plugin
	Status  []ToolStatus
	// MCP are the agent's MCP servers.
	MCP *mcpclient.Loaded
}

// Close stops every plugin.
func (a *Agent) Close() {
	var wg sync.WaitGroup
	for _, p := range a.Plugins {
		wg.Add(1)
		go func() { defer wg.Done(); p.Kill() }()
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

type launched struct {
	ref    spec.PluginRef
	cfg    launcher.Config
	plugin *launcher.Plugin
	err    error
}

// LoadSpec launches the spec's plugins in parallel and builds the toolset.
// Failures are collected and returned together as a *LoadError.
func LoadSpec(ctx context.Context, s *spec.Spec, opts Options) (*Agent, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.RestartBackoff <= 0 {
		opts.RestartBackoff = DefaultRestartBackoff
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
	results := make([]launched, len(refs))
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = launched{ref: ref}
			path, err := ResolvePlugin(ref, opts.PluginDirs)
			if err != nil {
				results[i].err = err
				return
			}
			results[i].cfg = launcher.Config{
				Name: ref.Name, Path: path, SHA256: ref.SHA256, Env: ref.Env,
				StartTimeout: opts.StartTimeout, Logger: opts.Logger, Getenv: opts.Getenv,
				CancelGrace: opts.CancelGrace,
			}
			results[i].plugin, results[i].err = launcher.Launch(ctx, results[i].cfg)
		}()
	}
	wg.Wait()

	a := &Agent{Spec: s, Toolset: toolset.New(opts.Logger)}
	var failures []string
	for _, r := range results {
		if r.err != nil {
			failures = append(failures, r.err.Error())
			continue
		}
		a.Plugins = append(a.Plugins, &Plugin{Name: r.ref.Name, ref: r.ref, cfg: r.cfg, cur: r.plugin, backoff: opts.RestartBackoff})
	}
	// Load every plugin's tools in parallel too (constructors may call back
	// into the host), then add them in spec order, so names and errors do not
	// depend on timing.
	loads := make([]pluginLoad, len(a.Plugins))
	for i, p := range a.Plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loads[i] = a.loadPlugin(ctx, p, opts)
		}()
	}
	wg.Wait()
	for _, l := range loads {
		failures = append(failures, l.failures...)
		for _, st := range l.status {
			if st.tool != nil {
				if err := a.Toolset.Add(st.tool); err != nil {
					failures = append(failures, fmt.Sprintf("%s:%s (%v)", st.Plugin, st.Name, err))
					continue
				}
			}
			a.Status = append(a.Status, st.ToolStatus)
		}
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

type pluginLoad struct {
	status   []toolLoad
	failures []string
}

type toolLoad struct {
	ToolStatus
	tool *pluginTool // nil when skipped
}

// loadPlugin asks one plugin to construct its tools.
func (a *Agent) loadPlugin(ctx context.Context, p *Plugin, opts Options) (out pluginLoad) {
	ref := p.ref
	described := map[string]*pluginv1.ToolSpec{}
	var all []string
	cur := p.cur
	for _, t := range cur.Tools {
		described[t.GetName()] = t
		all = append(all, t.GetName())
	}
	want := ref.Tools
	if want == nil {
		for _, name := range all {
			if !slices.Contains(ref.Exclude, name) {
				want = append(want, name)
			}
		}
	}
	var toLoad []string
	for _, name := range want {
		if _, ok := described[name]; !ok {
			out.failures = append(out.failures, fmt.Sprintf("%s:%s (plugin %s has no tool %s; it offers %s)", ref.Name, name, ref.Name, name, strings.Join(all, ", ")))
			continue
		}
		toLoad = append(toLoad, name)
	}
	if len(toLoad) == 0 {
		return out
	}

	configs := map[string]json.RawMessage{}
	wireConfigs := map[string]string{}
	for _, name := range toLoad {
		if c := ref.ConfigFor(name); c != nil {
			configs[name] = c
			wireConfigs[name] = string(c)
		}
	}
	stateDir := filepath.Join(opts.StateDir, "plugins", ref.Name)
	if opts.StateDir != "" {
		if err := os.MkdirAll(stateDir, 0o700); err != nil {
			out.failures = append(out.failures, fmt.Sprintf("%s (state dir: %v)", ref.Name, err))
			return out
		}
	}
	p.host = &capability.Host{
		Plugin:  ref.Name,
		Decider: opts.Decider,
		Env:     Environment(opts.WorkDir, opts.Getenv),
		Session: capability.Session{ID: opts.SessionID, WorkDir: opts.WorkDir, StateDir: stateDir},
		Configs: configs,
		Calls:   a.Toolset,
	}
	p.host.Progress = &capability.ProgressSinks{}
	p.req = &pluginv1.LoadRequest{
		Session:     &pluginv1.SessionInfo{Id: opts.SessionID, WorkDir: opts.WorkDir, StateDir: stateDir},
		Tools:       toLoad,
		ToolConfigs: wireConfigs,
	}
	for _, name := range toLoad {
		if len(described[name].GetCapabilities()) > 0 {
			p.needCaps = true
		}
	}
	resp, err := p.load(ctx, cur)
	if err != nil {
		out.failures = append(out.failures, fmt.Sprintf("%s (load: %v)", ref.Name, err))
		return out
	}
	for _, tl := range resp.GetTools() {
		d := described[tl.GetName()]
		st := ToolStatus{Name: tl.GetName(), Plugin: ref.Name, Path: cur.Path, Capabilities: d.GetCapabilities(), Reason: tl.GetReason()}
		switch tl.GetStatus() {
		case pluginv1.ToolLoad_STATUS_LOADED:
			st.Status = "loaded"
			p.loaded = append(p.loaded, d.GetName())
			timeout := callTimeout(time.Duration(d.GetDefaultTimeoutMs())*time.Millisecond, ref.Timeout)
			out.status = append(out.status, toolLoad{ToolStatus: st, tool: &pluginTool{plugin: p, onProgress: opts.OnProgress, spec: toolset.Spec{
				Name: d.GetName(), Description: d.GetDescription(), Parameters: []byte(d.GetParametersSchema()),
				Source: fmt.Sprintf("plugin %s (%s)", ref.Name, cur.Path), Capabilities: d.GetCapabilities(), Timeout: timeout,
			}}})
		case pluginv1.ToolLoad_STATUS_SKIPPED:
			st.Status = "skipped"
			opts.Logger.Info(fmt.Sprintf("Skipping tool %s: %s", tl.GetName(), tl.GetReason()))
			out.status = append(out.status, toolLoad{ToolStatus: st})
		default:
			out.failures = append(out.failures, fmt.Sprintf("%s:%s (%s)", ref.Name, tl.GetName(), tl.GetReason()))
		}
	}
	return out
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

func dataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
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
			Getenv: opts.Getenv, WorkDir: opts.WorkDir, RestartBackoff: opts.RestartBackoff, OnProgress: opts.OnProgress})
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
