package mcpclient

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/host/spec"
)

// Configs are the MCP servers of an agent: its spec's `mcp_servers`, then
// those of each MCP config file (--mcp-config-file). A name given twice is
// an error.
func Configs(s *spec.Spec, files []string) ([]spec.MCPServer, error) {
	lists := [][]spec.MCPServer{s.MCPServers}
	for _, f := range files {
		l, err := spec.LoadMCPConfig(f)
		if err != nil {
			return nil, err
		}
		lists = append(lists, l)
	}
	return spec.MergeMCPServers(lists...)
}

// Status is the load outcome of one MCP tool, or of a server that failed.
type Status struct {
	Server string
	// Name is the tool's name in the toolset; "" for a server that failed
	// to start.
	Name string
	// Source is Server.Source.
	Source string
	// Err is why the tool (or the server) is not available; nil when loaded.
	Err error
	// Tool is the tool when loaded.
	Tool *Tool
}

// Loaded are the MCP servers of an agent that started, and the status of
// each tool (and of each server that failed), in configuration order.
// Servers still starting when LoadAll returned are delivered later (Late).
type Loaded struct {
	Servers []*Server
	Status  []Status

	mu      sync.Mutex
	started []*Server // servers delivered late (Servers stays as returned)
	late    []*Loaded // delivered, not yet handed to a Late callback
	pending int       // servers still starting
	onLate  func(*Loaded)
	done    chan struct{} // closed when no server is pending
	closed  bool
	cancel  context.CancelFunc // ends the starts still pending
}

type started struct {
	i   int
	srv *Server
	err error
}

// LoadAll starts the servers in parallel and returns when all have started
// or failed, or after opts.StartupWait (0: no bound beyond their start timeouts),
// whichever comes first: a server still starting then keeps starting, and
// is delivered through Late. A server that fails to start or to list its
// tools is reported in Status, never fatal; so is an enabled_tools entry
// the server does not offer. Disabled servers are not started; ignored
// config keys are logged as warnings.
func LoadAll(ctx context.Context, cfgs []spec.MCPServer, opts Options) *Loaded {
	wait := opts.StartupWait
	ctx, cancel := context.WithCancel(ctx)
	results := make(chan started, len(cfgs))
	l := &Loaded{done: make(chan struct{}), cancel: cancel}
	var run []int
	for i, cfg := range cfgs {
		for _, w := range cfg.Warnings {
			if opts.Logger != nil {
				opts.Logger.Warn(w)
			}
		}
		if cfg.Disabled {
			if opts.Logger != nil {
				opts.Logger.Debug("MCP server disabled", "server", cfg.Name, "where", cfg.Where())
			}
			continue
		}
		run = append(run, i)
		go func() {
			srv, err := Start(ctx, cfg, opts)
			results <- started{i: i, srv: srv, err: err}
		}()
	}
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	got := map[int]started{}
collect:
	for len(got) < len(run) {
		select {
		case r := <-results:
			got[r.i] = r
		case <-timeout:
			break collect
		}
	}
	for _, i := range run {
		if r, ok := got[i]; ok {
			l.add(cfgs[i], r, opts)
		}
	}
	l.pending = len(run) - len(got)
	if l.pending == 0 {
		close(l.done)
		return l
	}
	go func() {
		for range l.pending {
			r := <-results
			one := &Loaded{}
			one.add(cfgs[r.i], r, opts)
			l.deliver(one)
		}
	}()
	return l
}

// add records the outcome of one server's start.
func (l *Loaded) add(cfg spec.MCPServer, r started, opts Options) {
	if r.err != nil {
		if opts.Logger != nil {
			opts.Logger.Warn("MCP server failed to start", "server", cfg.Name, "error", r.err)
		}
		l.Status = append(l.Status, Status{Server: cfg.Name, Source: source(cfg), Err: r.err})
		return
	}
	s := r.srv
	l.Servers = append(l.Servers, s)
	for _, t := range s.Tools() {
		l.Status = append(l.Status, Status{Server: cfg.Name, Name: t.name, Source: s.source, Tool: t})
	}
	l.Status = append(l.Status, s.Refused()...)
	offered := s.Offered()
	for _, name := range cfg.EnabledTools {
		if !slices.Contains(offered, name) {
			l.Status = append(l.Status, Status{Server: cfg.Name, Name: cfg.ToolName(name), Source: s.source,
				Err: fmt.Errorf("MCP server %s has no tool %s; it offers %s", cfg.Name, name, strings.Join(offered, ", "))})
		}
	}
}

// deliver hands a late server to the Late callback, or keeps it for one.
func (l *Loaded) deliver(one *Loaded) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		one.Close()
		l.finish()
		return
	}
	l.started = append(l.started, one.Servers...)
	fn := l.onLate
	if fn == nil {
		l.late = append(l.late, one)
	}
	l.mu.Unlock()
	if fn != nil {
		fn(one)
	}
	l.finish()
}

func (l *Loaded) finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending--
	if l.pending == 0 {
		close(l.done)
	}
}

// Late has fn told of each server that was still starting when LoadAll
// returned, once it has started (or failed): one call per server, on a
// goroutine of its own, with that server's Servers and Status.
func (l *Loaded) Late(fn func(*Loaded)) {
	l.mu.Lock()
	l.onLate = fn
	kept := l.late
	l.late = nil
	l.mu.Unlock()
	for _, one := range kept {
		fn(one)
	}
}

// All are the servers that started: Servers, then those delivered late.
func (l *Loaded) All() []*Server {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append(slices.Clone(l.Servers), l.started...)
}

// Wait waits until no server is still starting, or ctx ends.
func (l *Loaded) Wait(ctx context.Context) error {
	if l == nil || l.done == nil {
		return nil
	}
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops every server, in parallel.
func (l *Loaded) Close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	if l.cancel != nil {
		// A server still starting stops (and is closed when it is in).
		l.cancel()
		_ = l.Wait(context.Background())
	}
	servers := l.All()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.Close() }()
	}
	wg.Wait()
}
