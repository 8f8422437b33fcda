package pluginsdk

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// server implements pluginrpc.Server over a binary's Definitions.
type server struct {
	defs   map[string]*Definition
	order  []string
	logger hclog.Logger

	mu sync.RWMutex
	// loads are the loads the host made, by LoadRequest.LoadID: a process
	// a host shares between its sessions holds one a session.
	loads map[string]*loaded
}

// loaded is one load: its tools, its connection to the host's capability
// server and its session.
type loaded struct {
	tools   map[string]callFunc
	host    *pluginrpc.HostClient
	session pluginrpc.Session
}

func newServer(defs []Definition, logger hclog.Logger) *server {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &server{defs: map[string]*Definition{}, logger: logger, loads: map[string]*loaded{}}
	for i := range defs {
		d := &defs[i]
		s.defs[d.name] = d
		s.order = append(s.order, d.name)
	}
	return s
}

func (s *server) Describe(context.Context) (pluginrpc.Description, error) {
	return describe(s.order, s.defs), nil
}

func describe(order []string, defs map[string]*Definition) pluginrpc.Description {
	d := pluginrpc.Description{SDKVersion: SDKVersion, SharedLoads: true}
	for _, name := range order {
		def := defs[name]
		if def.processState {
			d.SharedLoads = false
		}
		d.Tools = append(d.Tools, pluginrpc.ToolSpec{
			Name: def.name, Description: def.description, ParametersSchema: def.schema,
			Capabilities: def.Capabilities(), DefaultTimeout: def.timeout, RuleArgument: def.ruleArg,
			Annotations: def.annotations,
		})
	}
	return d
}

func (s *server) Load(ctx context.Context, req pluginrpc.LoadRequest, dial pluginrpc.DialHost) ([]pluginrpc.ToolLoad, error) {
	names := req.Tools
	if len(names) == 0 {
		names = s.order
	}
	needed := map[string]bool{}
	for _, name := range names {
		if d, ok := s.defs[name]; ok {
			for _, c := range d.Capabilities() {
				needed[c] = true
			}
		}
	}
	var host *pluginrpc.HostClient
	if len(needed) > 0 && len(req.Capabilities) > 0 {
		h, err := dial()
		if err != nil {
			return nil, err
		}
		host = h
	}
	caps, err := newCapabilities(ctx, host, req.Capabilities, needed)
	if err != nil {
		if host != nil {
			_ = host.Close()
		}
		return nil, fmt.Errorf("fetch host capabilities: %w", err)
	}

	loads := make([]pluginrpc.ToolLoad, 0, len(names))
	tools := map[string]callFunc{}
	for _, name := range names {
		tl := pluginrpc.ToolLoad{Name: name}
		d, ok := s.defs[name]
		if !ok {
			tl.Status, tl.Reason = pluginrpc.StatusFailed, fmt.Sprintf("the plugin has no tool %q", name)
			loads = append(loads, tl)
			continue
		}
		fn, err := s.construct(ctx, d, caps)
		switch {
		case err == nil:
			tl.Status = pluginrpc.StatusLoaded
			tools[name] = fn
		case isSkip(err):
			tl.Status, tl.Reason = pluginrpc.StatusSkipped, skipReason(err)
		default:
			tl.Status, tl.Reason = pluginrpc.StatusFailed, err.Error()
		}
		loads = append(loads, tl)
	}

	s.mu.Lock()
	old := s.loads[req.LoadID]
	s.loads[req.LoadID] = &loaded{tools: tools, host: host, session: req.Session}
	s.mu.Unlock()
	if old != nil && old.host != nil {
		_ = old.host.Close()
	}
	return loads, nil
}

// Unload drops one load, closing its connection to the host (see
// pluginrpc.Unloader); the process's other loads go on.
func (s *server) Unload(_ context.Context, loadID string) error {
	s.mu.Lock()
	old := s.loads[loadID]
	delete(s.loads, loadID)
	s.mu.Unlock()
	if old != nil && old.host != nil {
		return old.host.Close()
	}
	return nil
}

func (s *server) construct(ctx context.Context, d *Definition, caps *capabilities) (callFunc, error) {
	if d.err != nil {
		return nil, d.err
	}
	values, err := caps.forTool(ctx, d.name, d.Capabilities())
	if err != nil {
		return nil, err
	}
	values[localLogger] = s.logger.Named(d.name)
	return d.construct(values)
}

func (s *server) Call(ctx context.Context, req pluginrpc.CallRequest) (pluginrpc.Result, error) {
	s.mu.RLock()
	l := s.loads[req.LoadID]
	var fn callFunc
	ok := l != nil
	if ok {
		fn, ok = l.tools[req.ToolName]
	}
	s.mu.RUnlock()
	if !ok {
		return toRPCResult(Result{Kind: KindError, Runtime: true,
			Message: fmt.Sprintf("tool %s is not loaded in this plugin", req.ToolName)}), nil
	}
	if len(req.TraceContext) > 0 {
		ctx = withTraceContext(ctx, req.TraceContext)
	}
	ctx = context.WithValue(ctx, toolCallKey{}, toolCall{id: req.ToolCallID, name: req.ToolName,
		logger: s.logger.Named(req.ToolName).With("tool_call_id", req.ToolCallID)})
	r := s.run(ctx, req, fn)
	return toRPCResult(capOutput(r, req.ToolCallID, l.session.StateDir)), nil
}

func (s *server) run(ctx context.Context, req pluginrpc.CallRequest, fn callFunc) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("tool panicked", "tool", req.ToolName, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			r = Result{Kind: KindError, Runtime: true, Message: fmt.Sprintf("tool %s panicked: %v", req.ToolName, p)}
		}
	}()
	return fn(ctx, req.Arguments)
}
