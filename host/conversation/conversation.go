// Package conversation is what every front end drives: one agent session
// behind the run loop (host/loop), its toolset and plugins, the approval
// flow and the session saved after each turn. Open puts a conversation
// together from a Config (agent spec, provider, prompt, session, hooks and
// permission rules, plugins, subagents, loop); Check runs the same steps
// without a model or a session, for `validate`. The terminal (host/repl),
// the Agent Client Protocol server (host/frontend/acp) and the wire protocol
// server (host/frontend/wire) each turn their own input into Turn and
// Cancel calls and the loop's events into their own output; none of them
// runs a step or builds a loop of its own.
package conversation

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/capability"
	"github.com/kosong-host/kosong-host/host/hooks"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/telemetry"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// ErrBusy: a turn is already running in this conversation.
var ErrBusy = errors.New("An agent turn is already in progress")

// ErrNotSaved wraps the error of saving the history after a turn whose
// own outcome was fine.
var ErrNotSaved = errors.New("the session was not saved")

// Request says which conversation a front end wants.
type Request struct {
	// WorkDir is the session's folder (absolute).
	WorkDir string
	// Resume is the id of a session to continue; "" starts a new one.
	Resume string
	// Ask asks the front end's user to approve an action.
	Ask approval.Asker
	// Yolo approves every action (until the flow's SetYolo(false)).
	Yolo bool
	// MCPServers are MCP servers the front end adds as tool sources of
	// this conversation, beside the agent's own.
	MCPServers []spec.MCPServer
	// Questions answers the questions of tools (AskUserQuestion); nil
	// where the front end's client cannot answer, and the tools that need
	// it are then skipped at load.
	Questions approval.UserInput
	// Editor is the editor's files the front end's client lends (ACP
	// fs/*): file tools that take the Editor capability read and write
	// through it; nil: they work on the disk.
	Editor capability.Editor
	// Terminal is the editor's terminal the client lends (ACP
	// terminal/*): Shell runs commands there; nil: Shell runs them itself.
	Terminal capability.Terminal
	// ClientHooks are hooks the front end's client answers (wire's
	// initialize.hooks), run beside the agent's and kept across reloads.
	ClientHooks []hooks.Hook
	// NoPlanTools leaves out EnterPlanMode and ExitPlanMode: the client
	// does not take part in plan mode (a wire client that did not declare
	// supports_plan_mode); it can still turn plan mode on and off.
	NoPlanTools bool
}

// Opener builds a conversation: the command line's agent, provider and
// flags (a Config), for the request's folder and session.
type Opener func(ctx context.Context, req Request) (*Conversation, error)

// Parts are what a conversation is made of. Open assembles them; New
// takes them as they are (tests).
type Parts struct {
	Session   *session.Session
	Loop      *loop.Loop
	Toolset   *toolset.Toolset
	Approvals *approval.Flow
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
	// Clear makes a new session and its loop with no history (/clear);
	// nil: the conversation cannot start a new session.
	Clear func() (*session.Session, *loop.Loop, error)
	// SetModel makes the loop that carries history on with the model
	// alias (/model); nil: the model cannot be switched.
	SetModel func(alias string, history []providers.Message) (*loop.Loop, error)
}

// Conversation is one session of the agent behind a front end. Turns run
// one at a time.
type Conversation struct {
	parts Parts
	// asm is how Open built it (nil for New): what Clear, SetModel,
	// Start and the accessors of the run's facts need.
	asm *assembly

	mu      sync.Mutex
	sess    *session.Session
	l       *loop.Loop
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
	if p.Approvals == nil {
		p.Approvals = approval.NewFlow(approval.ModeUnattended, nil, nil)
	}
	return &Conversation{parts: p, sess: p.Session, l: p.Loop}
}

// ID is the session id.
func (c *Conversation) ID() string { return c.Session().ID }

// Session is the session the history is saved in.
func (c *Conversation) Session() *session.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

// Toolset is the agent's toolset.
func (c *Conversation) Toolset() *toolset.Toolset { return c.parts.Toolset }

// Approvals is the approval flow (its mode, yolo on and off).
func (c *Conversation) Approvals() *approval.Flow { return c.parts.Approvals }

// AgentName names the agent.
func (c *Conversation) AgentName() string { return c.parts.AgentName }

// SetObserver says where the events go from now on.
func (c *Conversation) SetObserver(o loop.Observer) { c.parts.Events.Set(o) }

func (c *Conversation) loop() *loop.Loop {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.l
}

// History is the conversation so far.
func (c *Conversation) History() []providers.Message { return c.loop().History() }

// begin marks a turn (or another change of the loop) as running; it
// returns ErrBusy while another one runs or once the conversation is
// closed.
func (c *Conversation) begin(ctx context.Context) (context.Context, func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil || c.closed {
		return nil, nil, ErrBusy
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	c.cancel, c.running = cancel, done
	return ctx, func() {
		cancel()
		c.mu.Lock()
		c.cancel, c.running = nil, nil
		c.mu.Unlock()
		close(done)
	}, nil
}

// Turn runs one turn of the loop with the user's input and saves the
// history whatever the outcome (completed steps are kept). Cancel, or the
// end of ctx, cancels it and its tool calls. It returns ErrBusy while
// another turn runs; a failed save after a good turn is ErrNotSaved.
func (c *Conversation) Turn(ctx context.Context, input string) (loop.TurnResult, error) {
	return c.TurnContent(ctx, []providers.ContentPart{providers.TextPart(input)})
}

// TurnContent is Turn with a user message of several parts (a prompt and
// the files attached to it).
func (c *Conversation) TurnContent(ctx context.Context, content []providers.ContentPart) (loop.TurnResult, error) {
	ctx, end, err := c.begin(ctx)
	if err != nil {
		return loop.TurnResult{}, err
	}
	defer end()
	l := c.loop()
	if c.asm != nil {
		sess := c.Session()
		c.asm.checkpoints.Begin(sess.Dir, len(l.History()), providers.Message{Content: content[:1]}.Text())
		defer c.asm.checkpoints.End()
	}
	var sessID string
	if sess := c.Session(); sess != nil {
		sessID = sess.ID
	}
	ctx, endSpan := telemetry.StartTurn(ctx, c.parts.AgentName, sessID, providers.Message{Content: content}.Text())
	res, err := l.TurnContent(ctx, content)
	if serr := c.save(l); serr != nil && err == nil {
		err = serr
	}
	if terr := addTotals(c.Session(), res); terr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrNotSaved, terr)
	}
	endSpan(res.Usage, err)
	return res, err
}

func (c *Conversation) save(l *loop.Loop) error {
	sess := c.Session()
	if sess == nil {
		return nil
	}
	if err := sess.SaveHistory(l.History()); err != nil {
		return fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	return nil
}

// Compact summarises the history now, keeping what instruction asks, and
// saves it (loop.ErrNothingToCompact when there is too little).
func (c *Conversation) Compact(ctx context.Context, instruction string) (providers.Usage, error) {
	ctx, end, err := c.begin(ctx)
	if err != nil {
		return providers.Usage{}, err
	}
	defer end()
	l := c.loop()
	usage, err := l.Compact(ctx, instruction)
	if err != nil {
		return usage, err
	}
	return usage, c.save(l)
}

// Steer sends text into the running turn as a user message the model sees
// before its next request (loop.Loop.Steer); false when no turn runs, and
// the caller sends text as a turn of its own.
func (c *Conversation) Steer(text string) bool {
	c.mu.Lock()
	running := c.running != nil
	c.mu.Unlock()
	return running && c.loop().Steer(text)
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
// saved), fires SessionEnd and stops the agent's plugins. Later turns get
// ErrBusy.
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
	c.parts.Close()
}

// Relay is an observer whose target can be set after the loop is built.
type Relay struct {
	mu  sync.RWMutex
	obs loop.Observer
	// tap hears every event first (the audit log); set before use.
	tap loop.Observer
}

// Set says where events go; nil drops them.
func (r *Relay) Set(o loop.Observer) {
	r.mu.Lock()
	r.obs = o
	r.mu.Unlock()
}

// Observe passes e on.
func (r *Relay) Observe(e loop.Event) {
	if r.tap != nil {
		r.tap.Observe(e)
	}
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
	if c.parts.Reload == nil {
		return nil, ErrNoReload
	}
	return c.parts.Reload(ctx)
}
