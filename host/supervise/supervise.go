// Package supervise keeps a child process (a plugin binary, an MCP server)
// available to the calls that need it, with one restart policy and one
// grace period for every kind of child.
//
// A process that stops, or that a call found broken, is replaced for the
// next call: the first restart in a window at once, each further one after
// a doubling backoff, at most MaxRestarts in Window; past that the
// supervisor answers "NAME is down: REASON" until the window has room again.
// A restart runs on its own goroutine, never under a lock: every caller
// waiting for it waits on its own context, and one that gives up leaves the
// restart to the others.
//
// The host enforces the grace period itself: when a call on a process ends
// because its context was cancelled or timed out, the process must answer a
// liveness check (Process.Ping) within the grace period, or it is killed
// with everything it started and replaced for the next call, whatever it is
// doing (stopped by SIGSTOP, spinning, blocked in a library that ignores
// signals). Calls that come meanwhile wait for the verdict.
package supervise

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// The restart policy and grace period of every supervised process.
const (
	// MaxRestarts restarts are allowed in Window.
	MaxRestarts = 3
	Window      = time.Minute
	// DefaultBackoff is the delay before the second restart in the window;
	// it doubles for each further one (the first restart is immediate).
	DefaultBackoff = 250 * time.Millisecond
	// DefaultGrace is how long a process may take to answer after one of
	// its calls was cancelled or timed out before it is killed.
	DefaultGrace = 5 * time.Second
	// killWait bounds the wait for a killed process to be seen gone.
	killWait = 10 * time.Second
)

// Process is one running instance of a supervised child. Its methods may
// be called from any goroutine, Kill and Close more than once.
type Process interface {
	// Done is closed once the process has stopped.
	Done() <-chan struct{}
	// Reason says in one line why the process stopped, as far as known.
	Reason() string
	// Ping returns nil if the process answered a liveness check within ctx.
	Ping(ctx context.Context) error
	// Kill stops the process at once, with everything it started.
	Kill()
	// Close stops the process gracefully, then as Kill does.
	Close()
}

// Config says what to supervise.
type Config[P Process] struct {
	// Name names the child in messages: "plugin echo", "MCP server docs".
	Name string
	// Start starts a new process. ctx ends when the supervisor is closed;
	// Start bounds its own work with a start timeout.
	Start func(ctx context.Context) (P, error)
	// Backoff defaults to DefaultBackoff.
	Backoff time.Duration
	// Grace defaults to DefaultGrace.
	Grace  time.Duration
	Logger hclog.Logger
}

// Supervisor supervises one child.
type Supervisor[P Process] struct {
	cfg    Config[P]
	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // restarts, checks and kills in flight

	mu       sync.Mutex
	cur      *entry[P] // nil when no process runs
	starting *attempt  // the restart in progress, or nil
	restarts []time.Time
	lastDown time.Time
	reason   string // why the last process stopped
	closed   bool
	// idle: no process was ever started (NewIdle); the first start is
	// not a restart.
	idle bool
}

// entry is one process and what the supervisor knows of it.
type entry[P Process] struct {
	p      P
	broken bool   // a call found it broken, or it was killed
	killed string // why the supervisor killed it, if it did
	probe  chan struct{}
}

// attempt is one restart; err is set before done is closed.
type attempt struct {
	done  chan struct{}
	err   error
	first bool // the first start of an idle supervisor
}

// New supervises first, a process already started and ready.
func New[P Process](cfg Config[P], first P) *Supervisor[P] {
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Supervisor[P]{cfg: cfg, ctx: ctx, cancel: cancel, cur: &entry[P]{p: first}}
}

// NewIdle supervises a child not started yet: the first Get starts it
// (which is not counted as a restart), and it is supervised from then on
// as New's.
func NewIdle[P Process](cfg Config[P]) *Supervisor[P] {
	s := New(cfg, *new(P))
	s.cur, s.idle = nil, true
	return s
}

// Grace is the grace period the supervisor enforces.
func (s *Supervisor[P]) Grace() time.Duration { return s.cfg.Grace }

// Get returns a running process, restarting a stopped one within the
// policy. It waits for a restart in progress, or for the liveness check of
// a process whose call was cancelled, until ctx ends.
func (s *Supervisor[P]) Get(ctx context.Context) (P, error) {
	var zero P
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return zero, s.closedError()
		}
		e := s.cur
		if e != nil && !e.broken && !stopped(e.p) {
			ch := e.probe
			s.mu.Unlock()
			if ch == nil {
				return e.p, nil
			}
			if err := wait(ctx, ch); err != nil {
				return zero, err
			}
			continue
		}
		a := s.starting
		if a == nil {
			var err error
			if a, err = s.restartLocked(e); err != nil {
				s.mu.Unlock()
				return zero, err
			}
		}
		s.mu.Unlock()
		if err := wait(ctx, a.done); err != nil {
			return zero, err
		}
		if a.err != nil {
			return zero, a.err
		}
	}
}

// Check returns the error Get would return at once for a child that is
// closed, or down with no restart allowed now; else nil. It starts nothing.
func (s *Supervisor[P]) Check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.closedError()
	}
	e := s.cur
	if (e == nil || e.broken || stopped(e.p)) && s.starting == nil && len(s.recent(time.Now())) >= MaxRestarts {
		reason := s.reason
		if e != nil {
			reason = e.why()
		}
		return s.downError(reason)
	}
	return nil
}

// Broken records that p failed a call the way a dead process does (its
// connection is gone), so the next Get replaces it even before its exit is
// seen.
func (s *Supervisor[P]) Broken(p P) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && same(s.cur.p, p) {
		s.cur.broken = true
	}
}

// Current is the process in use, if any.
func (s *Supervisor[P]) Current() (P, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		var zero P
		return zero, false
	}
	return s.cur.p, true
}

// Guard watches a call on p: call release when the call returns. If ctx
// ends first (the call was cancelled or timed out), p must answer Ping
// within the grace period or it is killed and replaced.
func (s *Supervisor[P]) Guard(ctx context.Context, p P) (release func()) {
	var once sync.Once
	check := func() { once.Do(func() { s.check(p) }) }
	stop := context.AfterFunc(ctx, check)
	return func() {
		stop()
		// The call may return as its context ends, before the AfterFunc's
		// check has begun: begin it here (once), so the next Get waits for
		// its verdict.
		if ctx.Err() != nil {
			check()
		}
	}
}

// Close stops the child for good: a restart in progress is abandoned, the
// process is closed, and Close returns once nothing it started is left.
func (s *Supervisor[P]) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	e := s.cur
	s.cur = nil
	s.mu.Unlock()
	s.cancel()
	if e != nil {
		e.p.Close()
	}
	s.wg.Wait()
}

// restartLocked decides whether the stopped process e (nil if there is
// none) may be replaced now and starts the restart. s.mu is held.
func (s *Supervisor[P]) restartLocked(e *entry[P]) (*attempt, error) {
	now := time.Now()
	if e != nil {
		s.cur = nil
		s.reason, s.lastDown = e.why(), now
	}
	if s.idle && e == nil {
		s.idle = false
		a := &attempt{done: make(chan struct{}), first: true}
		s.starting = a
		s.wg.Add(1)
		go s.restart(a, nil, 0)
		return a, nil
	}
	s.idle = false
	recent := s.recent(now)
	if len(recent) >= MaxRestarts {
		if e != nil {
			s.background(e.p.Kill)
		}
		return nil, s.downError(s.reason)
	}
	var delay time.Duration
	if n := len(recent); n > 0 {
		delay = s.cfg.Backoff<<(n-1) - now.Sub(s.lastDown)
	}
	s.restarts = append(s.restarts, now)
	a := &attempt{done: make(chan struct{})}
	s.starting = a
	s.wg.Add(1)
	go s.restart(a, e, delay)
	return a, nil
}

// restart replaces old (if any) after delay, off every lock.
func (s *Supervisor[P]) restart(a *attempt, old *entry[P], delay time.Duration) {
	defer s.wg.Done()
	if old != nil {
		kill(old.p)
	}
	var p P
	err := sleep(s.ctx, delay)
	if err == nil {
		p, err = s.cfg.Start(s.ctx)
	}
	s.mu.Lock()
	s.starting = nil
	closed := s.closed
	switch {
	case closed:
		a.err = s.closedError()
	case err != nil && a.first:
		s.reason, s.lastDown = err.Error(), time.Now()
		a.err = fmt.Errorf("%s could not be started: %w", s.cfg.Name, err)
	case err != nil:
		s.reason, s.lastDown = err.Error(), time.Now()
		a.err = fmt.Errorf("%s stopped and could not be restarted: %w", s.cfg.Name, err)
	default:
		s.cur = &entry[P]{p: p}
	}
	close(a.done)
	s.mu.Unlock()
	switch {
	case closed && err == nil:
		p.Close()
	case err == nil && a.first:
		s.cfg.Logger.Debug("started " + s.cfg.Name)
	case err == nil:
		s.cfg.Logger.Info("restarted " + s.cfg.Name)
	default:
		s.cfg.Logger.Warn(s.cfg.Name+" could not be restarted", "error", err)
	}
}

// check makes sure p answers within the grace period after a call of its
// was cancelled, and kills it if not. One check runs at a time.
func (s *Supervisor[P]) check(p P) {
	deadline := time.Now().Add(s.cfg.Grace)
	s.mu.Lock()
	e := s.cur
	if s.closed || e == nil || !same(e.p, p) || e.broken || e.probe != nil {
		s.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	e.probe = ch
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithDeadline(s.ctx, deadline)
		err := p.Ping(ctx)
		cancel()
		dead := err != nil && s.ctx.Err() == nil
		killed := dead && !stopped(p)
		if killed {
			s.cfg.Logger.Warn(fmt.Sprintf("%s did not answer within %s after a call was cancelled; killing it", s.cfg.Name, s.cfg.Grace), "error", err)
			p.Kill()
		}
		s.mu.Lock()
		if dead {
			e.broken = true
		}
		if killed {
			e.killed = fmt.Sprintf("it did not answer within %s after a call was cancelled", s.cfg.Grace)
		}
		e.probe = nil
		close(ch)
		s.mu.Unlock()
	}()
}

// background runs fn on a goroutine that Close waits for.
func (s *Supervisor[P]) background(fn func()) {
	s.wg.Add(1)
	go func() { defer s.wg.Done(); fn() }()
}

// recent drops the restarts older than Window and returns the others.
func (s *Supervisor[P]) recent(now time.Time) []time.Time {
	s.restarts = slices.DeleteFunc(s.restarts, func(t time.Time) bool { return now.Sub(t) >= Window })
	return s.restarts
}

func (s *Supervisor[P]) downError(reason string) error {
	return fmt.Errorf("%s is down: %s (restarted %d times in %s)", s.cfg.Name, reason, len(s.restarts), Window)
}

func (s *Supervisor[P]) closedError() error { return fmt.Errorf("%s is closed", s.cfg.Name) }

// why says why the process stopped: killed by the supervisor, or its own
// account.
func (e *entry[P]) why() string {
	if e.killed != "" {
		return e.killed
	}
	return e.p.Reason()
}

// kill kills p and waits, within a bound, until it is seen gone.
func kill(p Process) {
	p.Kill()
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-p.Done():
	case <-t.C:
	}
}

func stopped(p Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

func same[P Process](a, b P) bool { return any(a) == any(b) }

// wait waits for ch to close or ctx to end.
func wait(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the call was cancelled: %w", context.Cause(ctx))
	}
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
