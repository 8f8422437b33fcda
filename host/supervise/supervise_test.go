package supervise_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/supervise"
)

// bound guards against a hang; it is never how long a test waits on purpose.
const bound = 30 * time.Second

// fake is a process whose liveness the test decides.
type fake struct {
	id     int
	done   chan struct{}
	once   sync.Once
	killed chan struct{}
	kills  atomic.Int32
	closes atomic.Int32
	// frozen makes Ping wait until its context ends, as a stopped process.
	frozen atomic.Bool
	reason string
}

func newFake(id int) *fake {
	return &fake{id: id, done: make(chan struct{}), killed: make(chan struct{}, 1), reason: fmt.Sprintf("process %d stopped", id)}
}

func (f *fake) Done() <-chan struct{} { return f.done }
func (f *fake) Reason() string        { return f.reason }
func (f *fake) stop()                 { f.once.Do(func() { close(f.done) }) }
func (f *fake) Kill() {
	if f.kills.Add(1) == 1 {
		f.killed <- struct{}{}
	}
	f.stop()
}
func (f *fake) Close() { f.closes.Add(1); f.stop() }
func (f *fake) Ping(ctx context.Context) error {
	if f.frozen.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	select {
	case <-f.done:
		return errors.New("gone")
	default:
		return nil
	}
}

// starter starts fakes numbered from 2; gate, when set, holds each start
// until it is sent a value.
type starter struct {
	n       atomic.Int32
	entered chan struct{} // told when a start begins
	gate    chan struct{}
	started chan *fake
	err     error
}

func (st *starter) start(ctx context.Context) (*fake, error) {
	if st.entered != nil {
		st.entered <- struct{}{}
	}
	if st.gate != nil {
		select {
		case <-st.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if st.err != nil {
		return nil, st.err
	}
	f := newFake(int(st.n.Add(1)) + 1)
	if st.started != nil {
		st.started <- f
	}
	return f, nil
}

func newSupervisor(t *testing.T, st *starter, cfg supervise.Config[*fake]) (*supervise.Supervisor[*fake], *fake) {
	t.Helper()
	first := newFake(1)
	cfg.Name = "plugin test"
	cfg.Start = st.start
	if cfg.Backoff == 0 {
		cfg.Backoff = time.Millisecond
	}
	s := supervise.New(cfg, first)
	t.Cleanup(s.Close)
	return s, first
}

func get(t *testing.T, s *supervise.Supervisor[*fake]) *fake {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	p, err := s.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRestartsWithinThePolicy(t *testing.T) {
	s, first := newSupervisor(t, &starter{}, supervise.Config[*fake]{})
	if p := get(t, s); p != first {
		t.Fatalf("got process %d, want the first", p.id)
	}
	p := first
	for i := range supervise.MaxRestarts {
		p.stop()
		next := get(t, s)
		if next == p || next.id != i+2 {
			t.Fatalf("restart %d: got process %d after %d", i+1, next.id, p.id)
		}
		p = next
	}
	p.reason = "it stopped: panic: boom"
	p.stop()
	want := "plugin test is down: it stopped: panic: boom (restarted 3 times in 1m0s)"
	if err := s.Check(); err == nil || err.Error() != want {
		t.Fatalf("Check = %v, want %s", err, want)
	}
	_, err := s.Get(context.Background())
	if err == nil || err.Error() != want {
		t.Fatalf("Get = %v, want %s", err, want)
	}
	// The last process is killed in the background: Close waits for it.
	s.Close()
	if p.kills.Load() == 0 {
		t.Fatal("the stopped process was not killed")
	}
}

func TestBrokenIsReplaced(t *testing.T) {
	s, first := newSupervisor(t, &starter{}, supervise.Config[*fake]{})
	s.Broken(newFake(99)) // not the current one: ignored
	if get(t, s) != first {
		t.Fatal("a stranger's Broken replaced the process")
	}
	s.Broken(first)
	if p := get(t, s); p == first {
		t.Fatal("a broken process was handed out again")
	}
	if first.kills.Load() == 0 {
		t.Fatal("the broken process was not killed")
	}
}

func TestBackoffDoubles(t *testing.T) {
	const backoff = 100 * time.Millisecond
	s, first := newSupervisor(t, &starter{}, supervise.Config[*fake]{Backoff: backoff})
	first.stop()
	p := get(t, s) // the first restart is immediate
	for _, want := range []time.Duration{backoff, 2 * backoff} {
		p.stop()
		start := time.Now()
		p = get(t, s)
		if d := time.Since(start); d < want {
			t.Fatalf("restarted after %s, want at least %s", d, want)
		}
	}
}

// TestWaitersHonourTheirContexts: two calls wait on a restart in progress;
// cancelling one returns it at once, the other gets the new process. The
// supervisor answers meanwhile: no lock is held across the start.
func TestWaitersHonourTheirContexts(t *testing.T) {
	st := &starter{gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	s, first := newSupervisor(t, st, supervise.Config[*fake]{})
	first.stop()
	ctxA, cancelA := context.WithCancel(context.Background())
	type got struct {
		p   *fake
		err error
	}
	a, b := make(chan got, 1), make(chan got, 1)
	go func() { p, err := s.Get(ctxA); a <- got{p, err} }()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		p, err := s.Get(ctx)
		b <- got{p, err}
	}()
	select {
	case <-st.entered:
	case <-time.After(bound):
		t.Fatal("no restart began")
	}
	if err := s.Check(); err != nil {
		t.Fatalf("Check during the restart: %v", err)
	}
	if _, ok := s.Current(); ok {
		t.Fatal("a stopped process is current during the restart")
	}
	cancelA()
	select {
	case r := <-a:
		if r.err == nil || r.err.Error() != "the call was cancelled: context canceled" {
			t.Fatalf("cancelled caller: %v", r.err)
		}
	case <-time.After(bound):
		t.Fatal("the cancelled caller did not return while the restart was held")
	}
	select {
	case r := <-b:
		t.Fatalf("the other caller returned before the restart: %+v", r)
	default:
	}
	st.gate <- struct{}{}
	select {
	case r := <-b:
		if r.err != nil || r.p.id != 2 {
			t.Fatalf("the other caller got %+v", r)
		}
	case <-time.After(bound):
		t.Fatal("the other caller never got the restarted process")
	}
}

func TestFailedRestart(t *testing.T) {
	st := &starter{err: errors.New("load: the disk is full")}
	s, first := newSupervisor(t, st, supervise.Config[*fake]{})
	first.stop()
	_, err := s.Get(context.Background())
	if err == nil || err.Error() != "plugin test stopped and could not be restarted: load: the disk is full" {
		t.Fatalf("Get = %v", err)
	}
	st.err = nil
	if p := get(t, s); p.id != 2 {
		t.Fatalf("after the failure, got %d", p.id)
	}
}

// TestGraceKillsAProcessThatDoesNotAnswer: a call cancelled on a process
// that does not answer gets it killed once the grace period is over; the
// next call waits for the verdict and gets a new process.
func TestGraceKillsAProcessThatDoesNotAnswer(t *testing.T) {
	const grace = 200 * time.Millisecond
	s, first := newSupervisor(t, &starter{}, supervise.Config[*fake]{Grace: grace})
	first.frozen.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	release := s.Guard(ctx, first)
	cancel()
	cancelled := time.Now()
	release()
	p := get(t, s)
	if p == first {
		t.Fatal("the frozen process was handed out again")
	}
	select {
	case <-first.killed:
	default:
		t.Fatal("the frozen process was not killed")
	}
	if d := time.Since(cancelled); d < grace {
		t.Fatalf("killed %s after the cancellation, before the grace period of %s", d, grace)
	}
}

func TestGraceKeepsAProcessThatAnswers(t *testing.T) {
	s, first := newSupervisor(t, &starter{}, supervise.Config[*fake]{Grace: time.Hour})
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		release := s.Guard(ctx, first)
		cancel()
		release()
		if p := get(t, s); p != first {
			t.Fatal("a process that answered was replaced")
		}
	}
	// A call that returns before its context ends checks nothing.
	ctx, cancel := context.WithCancel(context.Background())
	first.frozen.Store(true)
	s.Guard(ctx, first)()
	cancel()
	if p := get(t, s); p != first || first.kills.Load() != 0 {
		t.Fatal("a finished call had its process checked")
	}
}

// TestDownAfterFailedRestarts: failed restarts count, and the last failure
// is the reason given once they run out.
func TestDownAfterFailedRestarts(t *testing.T) {
	s, first := newSupervisor(t, &starter{err: errors.New("no")}, supervise.Config[*fake]{Grace: 10 * time.Millisecond})
	first.frozen.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	release := s.Guard(ctx, first)
	cancel()
	release()
	_, err := s.Get(context.Background())
	if err == nil || err.Error() != "plugin test stopped and could not be restarted: no" {
		t.Fatalf("Get = %v", err)
	}
	for range supervise.MaxRestarts - 1 {
		s.Get(context.Background())
	}
	_, err = s.Get(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "plugin test is down: no (restarted 3 times") {
		t.Fatalf("Get = %v", err)
	}
}

func TestClose(t *testing.T) {
	st := &starter{gate: make(chan struct{})}
	s, first := newSupervisor(t, st, supervise.Config[*fake]{})
	first.stop()
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		_, err := s.Get(ctx)
		errc <- err
	}()
	// Close abandons the held restart (its context ends) and waits for it.
	s.Close()
	if err := <-errc; err == nil || err.Error() != "plugin test is closed" {
		t.Fatalf("waiter after Close: %v", err)
	}
	if err := s.Check(); err == nil || err.Error() != "plugin test is closed" {
		t.Fatalf("Check after Close: %v", err)
	}

	s2, first2 := newSupervisor(t, &starter{}, supervise.Config[*fake]{})
	s2.Close()
	if first2.closes.Load() != 1 {
		t.Fatal("Close did not close the process")
	}
}

// TestWaitForTheVerdictHonoursTheContext: a call waiting for the liveness
// check of a process returns when its own context ends.
func TestWaitForTheVerdictHonoursTheContext(t *testing.T) {
	s, first := newSupervisor(t, &starter{}, supervise.Config[*fake]{Grace: time.Hour})
	first.frozen.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	release := s.Guard(ctx, first)
	cancel()
	release()
	wctx, wcancel := context.WithCancel(context.Background())
	wcancel()
	if _, err := s.Get(wctx); err == nil || err.Error() != "the call was cancelled: context canceled" {
		t.Fatalf("Get = %v", err)
	}
	// Close ends the check without killing anything.
	s.Close()
	if first.kills.Load() != 0 || first.closes.Load() != 1 {
		t.Fatalf("kills %d, closes %d", first.kills.Load(), first.closes.Load())
	}
}

func TestIdleStartsAtFirstGet(t *testing.T) {
	t.Run("started, then restarted within the policy", func(t *testing.T) {
		st := &starter{}
		s := supervise.NewIdle(supervise.Config[*fake]{Name: "plugin test", Start: st.start, Backoff: time.Millisecond})
		t.Cleanup(s.Close)
		if _, ok := s.Current(); ok {
			t.Fatal("an idle supervisor has a process")
		}
		if st.n.Load() != 0 {
			t.Fatal("started before the first Get")
		}
		p := get(t, s)
		// The first start is no restart: MaxRestarts restarts still follow.
		for i := range supervise.MaxRestarts {
			p.stop()
			next := get(t, s)
			if next == p {
				t.Fatalf("restart %d: the stopped process again", i+1)
			}
			p = next
		}
		p.stop()
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		if _, err := s.Get(ctx); err == nil || !strings.Contains(err.Error(), "is down") {
			t.Fatalf("past the policy: %v", err)
		}
	})
	t.Run("a failed first start says so", func(t *testing.T) {
		st := &starter{err: errors.New("sha256 mismatch")}
		s := supervise.NewIdle(supervise.Config[*fake]{Name: "plugin test", Start: st.start, Backoff: time.Millisecond})
		t.Cleanup(s.Close)
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		_, err := s.Get(ctx)
		if err == nil || err.Error() != "plugin test could not be started: sha256 mismatch" {
			t.Fatalf("first start: %v", err)
		}
		_, err = s.Get(ctx)
		if err == nil || !strings.Contains(err.Error(), "could not be restarted: sha256 mismatch") {
			t.Fatalf("second attempt: %v", err)
		}
	})
	t.Run("closed before any start", func(t *testing.T) {
		st := &starter{}
		s := supervise.NewIdle(supervise.Config[*fake]{Name: "plugin test", Start: st.start})
		s.Close()
		if _, err := s.Get(context.Background()); err == nil || st.n.Load() != 0 {
			t.Fatalf("Get after Close: %v, %d starts", err, st.n.Load())
		}
	})
}
