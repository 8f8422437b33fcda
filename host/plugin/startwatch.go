package plugin

import (
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/host/proc"
)

// startHardFactor bounds a start that keeps making progress: a plugin that
// is still using the CPU after this many start timeouts of wall time
// without completing its start is given up.
const startHardFactor = 10

// startWatch ends a plugin start (the handshake, then Describe) that makes
// no progress. A slow machine makes a start slow, not failed: the start
// timeout counts the time the plugin's processes (found by their tag) use
// no CPU, not the time that passes. The start is given up when they have
// used no CPU for the whole timeout (a plugin that waits forever), or after
// startHardFactor timeouts of wall time in all (one that spins, or a
// machine too starved to start anything). Time the host itself was not running (its
// ticks came late) is not counted against the plugin. Where the CPU cannot
// be measured (no /proc), the timeout is wall time, as it always was.
type startWatch struct {
	tag     string
	timeout time.Duration
	now     func() time.Time
	cpu     func(tag string) (time.Duration, bool)

	mu    sync.Mutex
	fired bool
	stop  chan struct{}
	done  chan struct{}
}

// measurable reports whether the plugin's CPU time can be measured here,
// and so whether go-plugin's own bound is startHardFactor timeouts.
func measurable() bool {
	_, ok := proc.TaggedCPU("")
	return ok
}

// watchStart watches the plugin tagged tag; give is called once when the
// start is given up.
func watchStart(tag string, timeout time.Duration, give func()) *startWatch {
	w := &startWatch{tag: tag, timeout: timeout, now: time.Now, cpu: proc.TaggedCPU,
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.run(give)
	return w
}

// tickFor is how often the watch looks: a tenth of the timeout, between
// 50 ms and 1 s.
func tickFor(timeout time.Duration) time.Duration {
	return min(max(timeout/10, 50*time.Millisecond), time.Second)
}

func (w *startWatch) run(give func()) {
	defer close(w.done)
	tick := tickFor(w.timeout)
	t := time.NewTicker(tick)
	defer t.Stop()
	start := w.now()
	last := start
	var idle, used time.Duration // time counted with no CPU used; CPU used
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		now := w.now()
		gap := now.Sub(last)
		last = now
		cpu, ok := w.cpu(w.tag)
		switch {
		case !ok:
			idle += gap // wall time, where the CPU cannot be measured
		case cpu > used:
			used, idle = cpu, 0
		default:
			// A late tick means the host was not running either: count at
			// most two ticks of it.
			idle += min(gap, 2*tick)
		}
		if idle >= w.timeout || now.Sub(start) >= startHardFactor*w.timeout {
			w.mu.Lock()
			w.fired = true
			w.mu.Unlock()
			give()
			return
		}
	}
}

// end stops the watch and reports whether it gave the start up.
func (w *startWatch) end() bool {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}
