package agent

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sync"

	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// reloader is the state Reload needs; set by LoadSpec.
type reloader struct {
	opts Options
	spec *spec.Spec // the spec of the last reload (or the load)

	mu sync.Mutex // one reload at a time
	// refs are the plugin references running (lock pins applied), by name.
	refs map[string]spec.PluginRef
	// tools are the toolset names of each plugin's loaded tools.
	tools map[string][]string
	// byName are the running plugins.
	byName map[string]*plugin.Plugin

	swapMu  sync.Mutex
	pending []func() // swaps waiting for the next step, in order

	watched map[string][32]byte // file -> content hash, for Changed
	watch   bool

	closing sync.WaitGroup // plugins being stopped after a swap
}

// newReloader records what LoadSpec loaded.
func newReloader(opts Options, s *spec.Spec, refs []spec.PluginRef, a *Agent) *reloader {
	r := &reloader{opts: opts, spec: s, refs: map[string]spec.PluginRef{}, tools: map[string][]string{}, byName: map[string]*plugin.Plugin{}}
	for _, ref := range refs {
		r.refs[ref.Name] = ref
	}
	for _, p := range a.Plugins {
		r.byName[p.Name()] = p
	}
	for _, st := range a.Status {
		if st.Status == "loaded" && st.MCPServer == "" && st.Plugin != "" {
			r.tools[st.Plugin] = append(r.tools[st.Plugin], st.Name)
		}
	}
	r.rememberFiles(s)
	return r
}

// Reloaded is what a reload did.
type Reloaded struct {
	// Started, Stopped and Kept name plugins (Started includes restarted
	// ones whose reference changed).
	Started, Stopped, Kept []string
	// Tools are the toolset's tools once the reload takes effect.
	Tools []string
	// Spec is the spec read.
	Spec *spec.Spec
	// Unapplied lists what changed but only takes effect in a new session
	// (mcp_servers, subagents).
	Unapplied []string
	// Overridden are the built-in plugins that installed binaries replace
	// with no pin, once the reload takes effect (see Agent.Overridden).
	Overridden []Override
}

// ReloadOptions refine a Reload.
type ReloadOptions struct {
	// Check vets the new spec and the tools it would give (e.g. its
	// permission rules against them); an error refuses the reload. The
	// function it returns (may be nil) runs when the new toolset takes
	// effect, between steps.
	Check func(s *spec.Spec, tools []toolset.Spec) (apply func(), err error)
	// Allow, if set, is asked before the spec is read: an error refuses
	// the reload (e.g. the agent's files are no longer trusted).
	Allow func() error
}

// refKey is what makes two references to a plugin the same: everything
// but where they were written.
func refKey(r spec.PluginRef) spec.PluginRef {
	r.Refs = nil
	return r
}

// Reload reads the agent's spec (and its lock file) again and brings the
// toolset in line: plugins whose reference changed or that are new are
// started, those gone or changed are stopped, the others keep running. The
// new toolset replaces the old one at the next step boundary (BeforeStep),
// so the model sees it at its next step and calls of the step in progress
// finish on the old plugins, which are stopped after the swap. A spec that
// does not load, a plugin that does not start, a tool name clash or a
// Check error refuses the reload: the old toolset stays, and the error is
// returned. MCP servers and subagents are kept as they are.
func (a *Agent) Reload(ctx context.Context, ro ReloadOptions) (*Reloaded, error) {
	r := a.rl
	if r == nil {
		return nil, errors.New("this agent cannot be reloaded")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ro.Allow != nil {
		if err := ro.Allow(); err != nil {
			return nil, err
		}
	}
	s, err := spec.Load(r.spec.Path, spec.LoadOptions{DefaultAgentPath: r.opts.DefaultAgentPath})
	if err != nil {
		return nil, err
	}
	refs, err := s.Plugins()
	if err != nil {
		return nil, err
	}
	res := &Reloaded{Spec: s}
	if !reflect.DeepEqual(s.MCPServers, r.spec.MCPServers) {
		res.Unapplied = append(res.Unapplied, "mcp_servers")
	}
	if !reflect.DeepEqual(s.Subagents, r.spec.Subagents) {
		res.Unapplied = append(res.Unapplied, "subagents")
	}
	// Compared as LoadSpec left them, pinned by the lock file; started
	// (pluginSpecs) as written, so that a pin from the lock file names it.
	pinned := slices.Clone(refs)
	if _, err := applyLock(s, pinned, r.opts.LockFile); err != nil {
		return nil, err
	}
	next := map[string]spec.PluginRef{}
	var start []spec.PluginRef
	for i, ref := range pinned {
		next[ref.Name] = ref
		old, ok := r.refs[ref.Name]
		if ok && reflect.DeepEqual(refKey(old), refKey(ref)) {
			res.Kept = append(res.Kept, ref.Name)
			continue
		}
		start = append(start, refs[i])
	}
	var remove []string
	for name := range r.refs {
		if !slices.Contains(res.Kept, name) {
			res.Stopped = append(res.Stopped, name)
			remove = append(remove, r.tools[name]...)
		}
	}
	slices.Sort(res.Stopped)

	// Start what is new, as LoadSpec does.
	specs, builtin, failures, err := pluginSpecs(s, start, r.opts)
	if err != nil {
		return nil, err
	}
	var loaded plugin.Loaded
	if len(specs) > 0 && len(failures) == 0 {
		loaded = *plugin.Load(ctx, specs, r.opts.pluginOptions())
		failures = append(failures, loaded.Failures...)
	}
	refuse := func(err error) (*Reloaded, error) {
		loaded.Close()
		return nil, err
	}
	if len(failures) > 0 || len(loaded.TimedOut.Plugins) > 0 {
		return refuse(&LoadError{Failures: failures, TimedOut: loaded.TimedOut})
	}

	// The toolset it would give: the tools that stay plus the new ones,
	// checked for clashes on a trial toolset first.
	var add []toolset.Tool
	newTools := map[string][]string{}
	var status []ToolStatus
	for _, st := range loaded.Status {
		if st.Tool != nil {
			add = append(add, st.Tool)
			newTools[st.Plugin] = append(newTools[st.Plugin], st.Name)
		}
		status = append(status, ToolStatus{Name: st.Name, Plugin: st.Plugin, Path: st.Path, Status: st.Status,
			Reason: st.Reason, Capabilities: st.Capabilities, Source: st.Source, Builtin: builtin[st.Plugin]})
	}
	trial := toolset.New(nil)
	var specsAfter []toolset.Spec
	for _, name := range a.Toolset.Names() {
		if slices.Contains(remove, name) {
			continue
		}
		if t, ok := a.Toolset.Find(name); ok {
			if err := trial.Add(t); err != nil {
				return refuse(err)
			}
			specsAfter = append(specsAfter, t.Spec())
		}
	}
	for _, t := range add {
		if err := trial.Add(t); err != nil {
			return refuse(&LoadError{Failures: []string{err.Error()}})
		}
		specsAfter = append(specsAfter, t.Spec())
	}
	var apply func()
	if ro.Check != nil {
		if apply, err = ro.Check(s, specsAfter); err != nil {
			return refuse(err)
		}
	}
	res.Tools = trial.Names()
	res.Overridden = overridden(pinned, r.opts)
	for _, p := range loaded.Plugins {
		res.Started = append(res.Started, p.Name())
	}
	slices.Sort(res.Started)

	// Commit: the bookkeeping now, the toolset at the next step.
	var stop []*plugin.Plugin
	for _, name := range res.Stopped {
		if p := r.byName[name]; p != nil {
			stop = append(stop, p)
		}
		delete(r.byName, name)
		delete(r.tools, name)
	}
	for _, p := range loaded.Plugins {
		r.byName[p.Name()] = p
	}
	for name, tools := range newTools {
		r.tools[name] = tools
	}
	r.refs = next
	r.spec = s
	r.rememberFiles(s)
	plugins := make([]*plugin.Plugin, 0, len(r.byName))
	for _, p := range r.byName {
		plugins = append(plugins, p)
	}
	r.stage(func() {
		if errs := a.Toolset.Replace(remove, add...); len(errs) > 0 {
			r.opts.Logger.Warn("reload: tools left out", "errors", fmt.Sprint(errs))
		}
		a.mu.Lock()
		a.Spec = s
		a.Plugins = plugins
		a.overridden = res.Overridden
		a.Status = slices.DeleteFunc(slices.Clone(a.Status), func(st ToolStatus) bool { return slices.Contains(res.Stopped, st.Plugin) })
		a.Status = append(a.Status, status...)
		a.mu.Unlock()
		if apply != nil {
			apply()
		}
		for _, p := range stop {
			r.closing.Add(1)
			go func() { defer r.closing.Done(); p.Close() }()
		}
	})
	return res, nil
}

// stage queues a swap for the next step boundary.
func (r *reloader) stage(fn func()) {
	r.swapMu.Lock()
	defer r.swapMu.Unlock()
	r.pending = append(r.pending, fn)
}

// ApplyPending applies the reloads staged since the last step. The loop
// calls it (through BeforeStep) between steps; a front end may call it
// when no turn runs (after /reload at the prompt).
func (a *Agent) ApplyPending() {
	if a.rl == nil {
		return
	}
	a.rl.swapMu.Lock()
	pending := a.rl.pending
	a.rl.pending = nil
	a.rl.swapMu.Unlock()
	for _, fn := range pending {
		fn()
	}
}

// WatchFiles turns on watching: before every step, BeforeStep compares the
// spec files (the extend chain) and the lock file with what was loaded and
// reloads when they changed. report receives each reload's outcome.
func (a *Agent) WatchFiles(ro ReloadOptions, report func(*Reloaded, error)) {
	if a.rl == nil {
		return
	}
	a.rl.mu.Lock()
	a.rl.watch = true
	a.rl.mu.Unlock()
	a.watchOpts, a.watchReport = ro, report
}

// BeforeStep is the loop's step-boundary hook (loop.Config.BeforeStep):
// with WatchFiles on, changed files are reloaded first; then the staged
// reloads take effect.
func (a *Agent) BeforeStep(ctx context.Context) {
	if a.rl != nil && a.rl.watching() && a.rl.changed() {
		res, err := a.Reload(ctx, a.watchOpts)
		if err != nil {
			// Not again until the files change once more.
			a.rl.mu.Lock()
			a.rl.rememberFiles(nil)
			a.rl.mu.Unlock()
		}
		if a.watchReport != nil {
			a.watchReport(res, err)
		}
	}
	a.ApplyPending()
}

func (r *reloader) watching() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.watch
}

// rememberFiles records the hashes of the watched files: s's extend chain
// and lock file, or (s nil) the files already watched as they are now.
func (r *reloader) rememberFiles(s *spec.Spec) {
	var files []string
	if s != nil {
		files = append(slices.Clone(s.Files), pins.PathFor(s.Path))
	} else {
		for f := range r.watched {
			files = append(files, f)
		}
	}
	r.watched = map[string][32]byte{}
	for _, f := range files {
		r.watched[f] = hashFile(f)
	}
}

// changed reports whether a watched file's content differs from what was
// loaded (a missing file counts as empty). Contents, not times: an editor
// that saves within the same clock tick, or by renaming, is still seen.
func (r *reloader) changed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for f, h := range r.watched {
		if hashFile(f) != h {
			return true
		}
	}
	return false
}

func hashFile(path string) [32]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		return [32]byte{}
	}
	return sha256.Sum256(data)
}
