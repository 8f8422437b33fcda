// Package pluginpool shares plugin processes between the sessions of one
// host process (plugin.Pool): sessions whose plugin is launched the same
// way (binary, arguments, pin, environment, launcher, grace period) get
// one process, into which each session loads its own tools (its own Load,
// with its own session, configuration and capability connection), as a
// remote tool server serves several hosts.
//
// A plugin is not shared, and each session gets a process of its own,
// when it is sandboxed (its policy names the session's folders), remote
// (a connection per session already), or when its binary does not declare
// that it serves several loads (a binary built before shared loads, or one
// with a tool declaring pluginsdk.KeepsProcessState).
//
// A shared process is supervised once, for all its sessions: a crash fails
// the calls in flight (each with the plugin's last words), the next call
// of any session restarts it within the supervision policy, and each
// session loads its tools again before its own next call. The process
// stops when the last session that acquired it releases it.
package pluginpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/supervise"
)

// Pool is a plugin.Pool. The zero value is not usable: call New.
type Pool struct {
	mu      sync.Mutex
	entries map[string]*entry
	// alone are the keys whose binary said it cannot be shared: later
	// sessions launch their own process without asking again.
	alone  map[string]bool
	closed bool
}

// entry is one shared process, or its first launch in progress.
type entry struct {
	ready chan struct{} // closed once the launch is over
	err   error         // the launch's error
	sup   *supervise.Supervisor[*plugin.Process]
	refs  int
}

// New returns an empty pool.
func New() *Pool {
	return &Pool{entries: map[string]*entry{}, alone: map[string]bool{}}
}

var _ plugin.Pool = (*Pool)(nil)

// errClosed is the error of Acquire on a closed pool.
var errClosed = errors.New("the plugin pool is closed")

// Acquire implements plugin.Pool.
func (p *Pool) Acquire(ctx context.Context, cfg plugin.Config) (plugin.Lease, error) {
	key := Key(cfg)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return plugin.Lease{}, errClosed
	}
	if key == "" || p.alone[key] {
		p.mu.Unlock()
		return own(ctx, cfg)
	}
	for {
		e, ok := p.entries[key]
		if !ok {
			break
		}
		e.refs++
		p.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			p.release(key, e)
			return plugin.Lease{}, fmt.Errorf("plugin %s: %w", cfg.Name, context.Cause(ctx))
		}
		if e.err != nil {
			p.release(key, e)
			// The launch that failed was another session's: its context
			// may have ended. Launch again for this one.
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				return plugin.Lease{}, errClosed
			}
			if p.alone[key] {
				p.mu.Unlock()
				return own(ctx, cfg)
			}
			continue
		}
		if e.sup == nil { // the binary cannot be shared
			p.release(key, e)
			return own(ctx, cfg)
		}
		cur, err := e.sup.Get(ctx)
		if err != nil {
			p.release(key, e)
			return plugin.Lease{}, err
		}
		return p.lease(key, e, cur), nil
	}
	e := &entry{ready: make(chan struct{}), refs: 1}
	p.entries[key] = e
	p.mu.Unlock()

	first, err := plugin.Launch(ctx, cfg)
	if err == nil && first.SharedLoads {
		e.sup = supervise.New(supervise.Config[*plugin.Process]{
			Name: "plugin " + cfg.Name, Start: relaunch(cfg), Grace: cfg.CancelGrace, Logger: cfg.Logger,
		}, first)
	}
	e.err = err
	if e.sup == nil {
		// Nothing to share: the sessions waiting launch their own process,
		// or, when the launch failed, try again each for itself.
		p.mu.Lock()
		if p.entries[key] == e {
			delete(p.entries, key)
		}
		if err == nil {
			p.alone[key] = true
		}
		p.mu.Unlock()
	}
	close(e.ready)
	if e.sup == nil {
		p.release(key, e)
		if err != nil {
			return plugin.Lease{}, err
		}
		return plugin.Lease{Process: first}, nil
	}
	return p.lease(key, e, first), nil
}

// lease hands out e's process, released once.
func (p *Pool) lease(key string, e *entry, cur *plugin.Process) plugin.Lease {
	var once sync.Once
	return plugin.Lease{Process: cur, Sup: e.sup, Release: func() { once.Do(func() { p.release(key, e) }) }}
}

// release drops one reference to e; the last stops its process.
func (p *Pool) release(key string, e *entry) {
	p.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last && p.entries[key] == e {
		delete(p.entries, key)
	}
	p.mu.Unlock()
	if last && e.sup != nil {
		e.sup.Close()
	}
}

// Processes is how many shared processes the pool holds.
func (p *Pool) Processes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, e := range p.entries {
		if e.sup != nil {
			n++
		}
	}
	return n
}

// Close stops every shared process, whoever still holds it: a host that
// shuts down calls it after closing its sessions. Acquire fails from then on.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	entries := p.entries
	p.entries = map[string]*entry{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		<-e.ready
		if e.sup != nil {
			wg.Add(1)
			go func() { defer wg.Done(); e.sup.Close() }()
		}
	}
	wg.Wait()
}

// own launches a process of the session's own.
func own(ctx context.Context, cfg plugin.Config) (plugin.Lease, error) {
	first, err := plugin.Launch(ctx, cfg)
	if err != nil {
		return plugin.Lease{}, err
	}
	return plugin.Lease{Process: first}, nil
}

// relaunch is a shared process's Start: it launches the plugin again and
// loads nothing; each session loads its tools before its next call.
func relaunch(cfg plugin.Config) func(context.Context) (*plugin.Process, error) {
	return func(ctx context.Context) (*plugin.Process, error) {
		cur, err := plugin.Launch(ctx, cfg)
		if err != nil {
			return nil, err
		}
		if !cur.SharedLoads {
			cur.Kill()
			return nil, errors.New("the binary no longer serves several sessions in one process")
		}
		return cur, nil
	}
}

// Key says which launches of a plugin may share a process: the same key,
// the same process. It is "" for a plugin that is never shared: sandboxed
// (its policy is the session's), remote, or launched without TLS.
func Key(cfg plugin.Config) string {
	if cfg.Sandbox != nil || cfg.Remote != nil || cfg.NoTLS {
		return ""
	}
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env := make([][2]string, 0, len(cfg.Env))
	for _, name := range cfg.Env {
		env = append(env, [2]string{name, getenv(name)})
	}
	b, err := json.Marshal(struct {
		Name, Path, SHA256, LockFile string
		Args, Launcher               []string
		Env                          [][2]string
		Builtin                      bool
		Grace, Start                 int64
	}{cfg.Name, cfg.Path, cfg.SHA256, cfg.LockFile, cfg.Args, cfg.Launcher, env, cfg.Builtin,
		int64(cfg.CancelGrace), int64(cfg.StartTimeout)})
	if err != nil {
		return ""
	}
	return string(b)
}
