package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/host/capability"
	"github.com/kosong-host/kosong-host/host/launcher"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// Restart limits: a plugin that stops is restarted for its next call, after
// a short backoff, at most MaxRestarts times in RestartWindow; then its tools
// answer "plugin NAME is down: REASON" until the host restarts.
const (
	MaxRestarts   = 3
	RestartWindow = time.Minute
)

// Plugin is a plugin binary under supervision.
type Plugin struct {
	Name string

	ref  spec.PluginRef
	res  Resolved // where ref led: a plugin binary or a built-in
	cfg  launcher.Config
	host *capability.Host
	// req is the Load request, sent again after each restart with the new
	// broker id.
	req      *pluginv1.LoadRequest
	needCaps bool
	// loaded are the tools that loaded at first; a restart must load them again.
	loaded []string
	// backoff is the delay before the n-th restart in the window: backoff << n.
	backoff time.Duration

	mu       sync.Mutex
	cur      *launcher.Plugin
	broken   bool // cur failed a call as a dead process would
	restarts []time.Time
	down     error
}

// markBroken records that cur failed a call the way a dead process does
// (its connection is gone), so the next call restarts it even before
// go-plugin has noticed the exit.
func (p *Plugin) markBroken(cur *launcher.Plugin) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == cur {
		p.broken = true
	}
}

// Current is the running process, or nil.
func (p *Plugin) Current() *launcher.Plugin {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// Kill stops the plugin for good.
func (p *Plugin) Kill() {
	p.mu.Lock()
	cur := p.cur
	if p.down == nil {
		p.down = errors.New("the agent was closed")
	}
	p.mu.Unlock()
	if cur != nil {
		cur.Kill()
	}
}

// load sends the Load request to the current process, serving the host
// capabilities on its broker first when its tools need some.
func (p *Plugin) load(ctx context.Context, cur *launcher.Plugin) (*pluginv1.LoadResponse, error) {
	req := &pluginv1.LoadRequest{Session: p.req.GetSession(), Tools: p.req.GetTools(), ToolConfigs: p.req.GetToolConfigs()}
	// A brokered server nobody dials would wait for nothing: serve only to
	// plugins whose tools ask for capabilities.
	if p.needCaps {
		req.CapabilityBrokerId, req.Capabilities = p.host.Serve(cur.Remote.Broker), capability.Offered
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return cur.Remote.Plugin.Load(lctx, req)
}

// get returns a running process, restarting a stopped one within the limits.
func (p *Plugin) get(ctx context.Context) (*launcher.Plugin, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down != nil {
		return nil, p.down
	}
	if p.cur != nil && !p.broken && !p.cur.Exited() {
		return p.cur, nil
	}
	reason := "it stopped"
	if p.cur != nil {
		if words := p.cur.LastWords(); words != "" {
			reason = "it stopped: " + words
		}
		p.cur.Kill()
		p.cur, p.broken = nil, false
	}
	now := time.Now()
	p.restarts = slices.DeleteFunc(p.restarts, func(t time.Time) bool { return now.Sub(t) > RestartWindow })
	if len(p.restarts) >= MaxRestarts {
		p.down = fmt.Errorf("plugin %s is down: %s (restarted %d times in %s)", p.Name, reason, len(p.restarts), RestartWindow)
		return nil, p.down
	}
	if d := p.backoff << len(p.restarts); d > 0 && len(p.restarts) > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	p.restarts = append(p.restarts, time.Now())
	cur, err := p.restart(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %s stopped and could not be restarted: %w", p.Name, err)
	}
	p.cur = cur
	return cur, nil
}

func (p *Plugin) restart(ctx context.Context) (*launcher.Plugin, error) {
	// The process outlives this call: launch it with a context of its own.
	cur, err := launcher.Launch(context.WithoutCancel(ctx), p.cfg)
	if err != nil {
		return nil, err
	}
	resp, err := p.load(ctx, cur)
	if err != nil {
		cur.Kill()
		return nil, fmt.Errorf("load: %w", err)
	}
	var missing []string
	for _, name := range p.loaded {
		if !slices.ContainsFunc(resp.GetTools(), func(tl *pluginv1.ToolLoad) bool {
			return tl.GetName() == name && tl.GetStatus() == pluginv1.ToolLoad_STATUS_LOADED
		}) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		cur.Kill()
		return nil, fmt.Errorf("tools %s did not load again", strings.Join(missing, ", "))
	}
	return cur, nil
}
