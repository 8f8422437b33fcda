// Package conversation is what every front end drives: one agent session
// behind the run loop (host/loop), its toolset and plugins, the approval
// flow and the session saved after each turn. The terminal (host/repl), the
// Agent Client Protocol server (host/frontend/acp) and the wire protocol
// server (host/frontend/wire) each turn their own input into Turn and
// Cancel calls and the loop's events into their own output; none of them
// runs a step of its own.
package conversation

import (
	"context"
	"errors"
	"sync"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/capability"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"

	"github.com/kosong-host/kosong-host/host/approval"
)

// ErrBusy: a turn is already running in this conversation.
var ErrBusy = errors.New("An agent turn is already in progress")

// Request says which conversation a front end wants.
type Request struct {
	// WorkDir is the session's folder (absolute).
	WorkDir string
	// Resume is the id of a session to continue; "" starts a new one.
	Resume string
	// Ask asks the front end's user to approve an action.
	Ask approval.Asker
	// Yolo approves every action (until SetYolo(false)).
	Yolo bool
	// MCPServers are MCP servers the front end adds as tool sources of
	// this conversation, beside the agent's own.
	MCPServers []spec.MCPServer
	// Questions answers the questions of tools (AskUserQuestion); nil
	// where the front end's client cannot answer, and the tools that need
	// it are then skipped at load.
	Questions capability.UserInput
}

// Opener builds a conversation: the command line's agent, provider and
// flags, for the request's folder and session.
type Opener func(ctx context.Context, req Request) (*Conversation, error)

// Parts are what an Opener assembles.
type Parts struct {
	Session   *session.Session
	Loop      *loop.Loop
	Toolset   *toolset.Toolset
	Approvals *Approvals
	// Events is the loop's (and the approvals') observer; the front end
	// says where the events go with SetObserver.
	Events *Relay
	// AgentName names the agent (for front ends that show it).
	AgentName string
	// Reload reloads the agent's spec: changed plugins are started or
	// stopped and the new toolset takes effect at the next step (at once
	// when no turn runs). nil: the conversation cannot be reloaded.
	Reload func(ctx context.Context) (*agent.Reloaded, error)
	// Close stops the agent's plugins and MCP servers.
	Close func()
}

// Conversation is one session of the agent behind a front end. Turns run
// one at a time.
type Conversation struct {
	Parts

	mu      sync.Mutex
	cancel  context.CancelFunc
	running chan struct{}
	closed  bool
}

// New returns the conversation of p.
func New(p Parts) *Conversation {
	if p.Events == nil {
		p.Events = &Relay{}
	}
	if p.Close == nil {
		p.Close = func() {}
	}
	return &Conversation{Parts: p}
}

// ID is the session id.
func (c *Conversation) ID() string { return c.Session.ID }

// SetObserver says where the events go from now on.
func (c *Conversation) SetObserver(o loop.Observer) { c.Events.Set(o) }

// History is the conversation so far.
func (c *Conversation) History() []providers.Message { return c.Loop.History() }

// Turn runs one turn of the loop with the user's input and saves the
// history whatever the outcome (completed steps are kept). Cancel, or the
// end of ctx, cancels it and its tool calls. It returns ErrBusy while
// another turn runs.
func (c *Conversation) Turn(ctx context.Context, input string) (loop.TurnResult, error) {
	c.mu.Lock()
	if c.running != nil || c.closed {
		c.mu.Unlock()
		return loop.TurnResult{}, ErrBusy
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	c.cancel, c.running = cancel, done
	c.mu.Unlock()
	defer func() {
		cancel()
		c.mu.Lock()
		c.cancel, c.running = nil, nil
		c.mu.Unlock()
		close(done)
	}()
	res, err := c.Loop.Turn(ctx, input)
	if serr := c.Session.SaveHistory(c.Loop.History()); serr != nil && err == nil {
		err = serr
	}
	return res, err
}

// Running reports whether a turn runs.
func (c *Conversation) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running != nil
}

// Cancel cancels the running turn and returns at once; false if no turn
// runs.
func (c *Conversation) Cancel() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel == nil {
		return false
	}
	c.cancel()
	return true
}

// Close cancels the running turn, waits for it to end (its history is
// saved) and stops the agent's plugins. Later turns get ErrBusy.
func (c *Conversation) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	running := c.running
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
	if running != nil {
		<-running
	}
	c.Parts.Close()
}

// Relay is an observer whose target can be set after the loop is built.
type Relay struct {
	mu  sync.RWMutex
	obs loop.Observer
}

// Set says where events go; nil drops them.
func (r *Relay) Set(o loop.Observer) {
	r.mu.Lock()
	r.obs = o
	r.mu.Unlock()
}

// Observe passes e on.
func (r *Relay) Observe(e loop.Event) {
	r.mu.RLock()
	o := r.obs
	r.mu.RUnlock()
	if o != nil {
		o.Observe(e)
	}
}

// Idle is closed once no turn runs (at once if none does).
func (c *Conversation) Idle() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil {
		return c.running
	}
	done := make(chan struct{})
	close(done)
	return done
}

// ErrNoReload: the conversation was built without a Reload.
var ErrNoReload = errors.New("this conversation cannot be reloaded")

// ReloadAgent reloads the agent (Parts.Reload).
func (c *Conversation) ReloadAgent(ctx context.Context) (*agent.Reloaded, error) {
	if c.Reload == nil {
		return nil, ErrNoReload
	}
	return c.Reload(ctx)
}
