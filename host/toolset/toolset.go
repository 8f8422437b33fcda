// Package toolset holds the tools an agent may call, whatever their source
// (plugin binaries, MCP servers), validates each call's arguments against
// the tool's JSON Schema, fills in the schema's defaults (both with
// pluginsdk/arguments, as plugintest does) and runs calls concurrently,
// never blocking the caller and never panicking.
package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk/arguments"
	"github.com/kosong-host/kosong-host/pluginsdk/deadline"
	"github.com/kosong-host/kosong-host/providers"
)

// Spec describes a tool.
type Spec struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments.
	Parameters json.RawMessage
	// Source names where the tool comes from, e.g. "plugin echo".
	Source string
	// Capabilities the tool was given.
	Capabilities []string
	// Timeout bounds each call without progress (KeepAlive restarts it);
	// 0 means none.
	Timeout time.Duration
	// RuleArgument is the argument permission rules match (the tool's
	// Describe declares it); "" means rules name the tool only.
	RuleArgument string
}

// Tool is a tool the toolset can run.
type Tool interface {
	Spec() Spec
	// Call runs the tool with validated arguments, the defaults of absent
	// properties filled in. ctx carries the call's
	// deadline and is cancelled when the call is.
	Call(ctx context.Context, id string, args json.RawMessage) Result
}

// Toolset is the set of tools of an agent.
type Toolset struct {
	logger hclog.Logger

	mu    sync.RWMutex
	tools map[string]*entry
	// byModel holds the tools by the name the model sees (see ModelName).
	byModel map[string]*entry
	order   []string
	defs    []providers.ToolDef
	active  map[string]int

	watchMu  sync.Mutex // held while watchers run, so they see changes in order
	watchers []func()

	guard Guard
	// plan: plan mode is on (planmode.go).
	plan bool
}

// Guard admits tool calls before they run (permission rules, PreToolUse
// hooks) and hears of their results (PostToolUse hooks).
type Guard interface {
	// Admit runs before the call, with its validated arguments; a non-nil
	// result ends the call with it instead of running the tool.
	Admit(ctx context.Context, c Call) *Result
	// Done runs once the call's result is in; it must not block long.
	Done(ctx context.Context, c Call, r Result)
}

// Call is a tool call as a Guard sees it.
type Call struct {
	ID   string
	Spec Spec
	// Args are the validated arguments, defaults filled in.
	Args json.RawMessage
}

// SetGuard sets the guard of every later call (nil: none).
func (ts *Toolset) SetGuard(g Guard) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.guard = g
}

type entry struct {
	tool Tool
	spec Spec
	// modelName is the name offered to the model.
	modelName string
	schema    *arguments.Schema
}

// New returns an empty toolset.
func New(logger hclog.Logger) *Toolset {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Toolset{logger: logger, tools: map[string]*entry{}, byModel: map[string]*entry{}, active: map[string]int{}}
}

// Add adds a tool. Two tools with one name, or whose names are offered to
// the model under one name (see ModelName), is an error naming both.
func (ts *Toolset) Add(t Tool) error {
	spec := t.Spec()
	schema, err := arguments.Compile(spec.Name, spec.Parameters)
	if err != nil {
		return err
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.addLocked(&entry{tool: t, spec: spec, schema: schema})
}

// addLocked adds e; ts.mu is held.
func (ts *Toolset) addLocked(e *entry) error {
	spec := e.spec
	if spec.Name == "" {
		return fmt.Errorf("a tool of %s has no name", spec.Source)
	}
	if old, ok := ts.tools[spec.Name]; ok {
		return fmt.Errorf("duplicate tool name %s: provided by %s and by %s", spec.Name, old.spec.Source, spec.Source)
	}
	e.modelName = ModelName(spec.Name)
	if old, ok := ts.byModel[e.modelName]; ok {
		return &NameClashError{Name: spec.Name, Source: spec.Source, Other: old.spec.Name, OtherSource: old.spec.Source, ModelName: e.modelName}
	}
	ts.tools[spec.Name] = e
	ts.byModel[e.modelName] = e
	ts.order = append(ts.order, spec.Name)
	ts.defs = append(ts.defs, providers.ToolDef{Name: e.modelName, Description: spec.Description, Parameters: spec.Parameters})
	return nil
}

// NameClashError is a tool whose name would be offered to the model under
// the name of a tool already there (see ModelName).
type NameClashError struct {
	Name, Source       string
	Other, OtherSource string
	ModelName          string
}

func (e *NameClashError) Error() string {
	return fmt.Sprintf("tools %s (%s) and %s (%s) would both be offered to the model as %s: rename one",
		e.Other, e.OtherSource, e.Name, e.Source, e.ModelName)
}

// Replace removes the named tools and adds others in one step, so that no
// Tools list in between misses both: a source whose tools changed (an MCP
// server's list_changed) swaps its old tools for its new ones. Calls of a
// removed tool that are running go on. A new tool that clashes with one
// that stays is left out, with an error naming both sources; the others are
// added.
func (ts *Toolset) Replace(remove []string, add ...Tool) []error {
	var errs []error
	entries := make([]*entry, 0, len(add))
	for _, t := range add {
		spec := t.Spec()
		schema, err := arguments.Compile(spec.Name, spec.Parameters)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		entries = append(entries, &entry{tool: t, spec: spec, schema: schema})
	}
	ts.watchMu.Lock()
	defer ts.watchMu.Unlock()
	ts.mu.Lock()
	for _, name := range remove {
		if e, ok := ts.tools[name]; ok {
			delete(ts.byModel, e.modelName)
			delete(ts.tools, name)
		}
	}
	order, defs := ts.order[:0:0], ts.defs[:0:0]
	for i, name := range ts.order {
		if _, ok := ts.tools[name]; ok {
			order, defs = append(order, name), append(defs, ts.defs[i])
		}
	}
	ts.order, ts.defs = order, defs
	for _, e := range entries {
		if err := ts.addLocked(e); err != nil {
			errs = append(errs, err)
		}
	}
	ts.mu.Unlock()
	for _, fn := range ts.watchers {
		fn()
	}
	return errs
}

// Watch calls fn at once and again after each Replace, once the toolset
// holds the new tools; never two calls at a time. (Add only builds the
// toolset up before it is used, and calls nothing.)
func (ts *Toolset) Watch(fn func()) {
	ts.watchMu.Lock()
	defer ts.watchMu.Unlock()
	ts.watchers = append(ts.watchers, fn)
	fn()
}

// Find returns the named tool, by its own name or the one the model sees,
// else the tool offered to the model under the name that name would get
// (so Find reports the clash Add refused).
func (ts *Toolset) Find(name string) (Tool, bool) {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	e := ts.lookupLocked(name)
	if e == nil {
		e = ts.byModel[ModelName(name)]
	}
	if e == nil {
		return nil, false
	}
	return e.tool, true
}

// lookupLocked finds a tool by the name the model sees, else by its own
// name; ts.mu is held. (The two cannot point at different tools: a name
// the model sees is a valid name, and a tool with a valid name is offered
// under it.)
func (ts *Toolset) lookupLocked(name string) *entry {
	if e, ok := ts.byModel[name]; ok {
		return e
	}
	return ts.tools[name]
}

// ModelNameOf is the name the model sees for the named tool; ok is false
// when there is no such tool.
func (ts *Toolset) ModelNameOf(name string) (string, bool) {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	e, ok := ts.tools[name]
	if !ok {
		return "", false
	}
	return e.modelName, true
}

// Names lists the tools in the order they were added.
func (ts *Toolset) Names() []string {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	return append([]string(nil), ts.order...)
}

// Tools returns the tools as the model sees them, in the order added, each
// under its ModelName.
func (ts *Toolset) Tools() []providers.ToolDef {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	if ts.plan {
		return ts.planDefsLocked()
	}
	return append([]providers.ToolDef(nil), ts.defs...)
}

// Active reports whether a call with this id is running.
func (ts *Toolset) Active(id string) bool {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	return ts.active[id] > 0
}

// Pending is a call in progress.
type Pending struct {
	done   chan struct{}
	result Result
}

// Done is closed when the result is in.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Result waits for the result.
func (p *Pending) Result() Result {
	<-p.done
	return p.result
}

func resolved(r Result) *Pending {
	p := &Pending{done: make(chan struct{}), result: r}
	close(p.done)
	return p
}

// Handle starts a tool call and returns at once. The call names the tool
// as the model sees it (or by its own name). Calls to unknown tools and
// calls with invalid arguments are resolved immediately; valid calls run in
// their own goroutine until they return or ctx is cancelled. The tool gets
// the arguments with the schema's defaults filled in for absent properties,
// in nested objects too.
func (ts *Toolset) Handle(ctx context.Context, call providers.ToolCall) *Pending {
	p, run := ts.start(ctx, call)
	if run != nil {
		go run()
	}
	return p
}

// Call runs a tool call as Handle does, in the caller's goroutine, and
// returns its result: Handle(ctx, call).Result() without a goroutine and
// a hand-over of its own.
func (ts *Toolset) Call(ctx context.Context, call providers.ToolCall) Result {
	p, run := ts.start(ctx, call)
	if run != nil {
		run()
	}
	return p.result
}

// start resolves a call that does not run (an unknown tool, invalid
// arguments), or returns its Pending and the function that runs it.
func (ts *Toolset) start(ctx context.Context, call providers.ToolCall) (*Pending, func()) {
	ctx, after := takeAfter(ctx)
	ts.mu.RLock()
	e := ts.lookupLocked(call.Name)
	ts.mu.RUnlock()
	if e == nil {
		r := withID(NotFound(call.Name), call.ID)
		if after != nil {
			after(r)
		}
		return resolved(r), nil
	}
	args, err := e.schema.Check([]byte(call.Arguments))
	if err != nil {
		r := withID(refused(err), call.ID)
		if after != nil {
			after(r)
		}
		return resolved(r), nil
	}

	ts.mu.Lock()
	ts.active[call.ID]++
	guard := ts.guard
	ts.mu.Unlock()
	p := &Pending{done: make(chan struct{})}
	return p, func() {
		start := time.Now()
		var r Result
		gc := Call{ID: call.ID, Spec: e.spec, Args: args}
		if refused := ts.planAdmit(ctx, e); refused != nil {
			r = *refused
		} else if guard != nil {
			if blocked := guard.Admit(ctx, gc); blocked != nil {
				r = *blocked
			} else {
				r = ts.run(ctx, e, call.ID, args)
			}
			guard.Done(ctx, gc, r)
		} else {
			r = ts.run(ctx, e, call.ID, args)
		}
		ts.mu.Lock()
		if ts.active[call.ID]--; ts.active[call.ID] <= 0 {
			delete(ts.active, call.ID)
		}
		ts.mu.Unlock()
		if ts.logger.IsDebug() {
			ts.logger.Debug("tool call", "tool", call.Name, "id", call.ID, "duration", time.Since(start), "error", r.IsError())
		}
		p.result = withID(r, call.ID)
		close(p.done)
		if after != nil {
			after(p.result)
		}
	}
}

func (ts *Toolset) run(ctx context.Context, e *entry, id string, args json.RawMessage) (r Result) {
	defer func() {
		if v := recover(); v != nil {
			ts.logger.Error("tool call panicked in the host", "tool", e.spec.Name, "panic", fmt.Sprint(v))
			r = RuntimeError(fmt.Errorf("%v", v))
		}
	}()
	if e.spec.Timeout > 0 {
		var stop func()
		ctx, stop = withIdleTimeout(ctx, e.spec.Timeout)
		defer stop()
	}
	r = e.tool.Call(ctx, id, args)
	if r.Kind != Ok {
		// A failure this close to the deadline may be the deadline's, seen
		// first by the plugin.
		deadline.Await(ctx)
	}
	if (timedOut(ctx) || errors.Is(ctx.Err(), context.DeadlineExceeded)) && r.Kind != Ok {
		return Result{Kind: Failed, Message: fmt.Sprintf("Tool %s timed out after %s", e.spec.Name, e.spec.Timeout),
			Brief: "Timed out", Output: r.Output}
	}
	return r
}

func withID(r Result, id string) Result {
	r.ToolCallID = id
	return r
}
