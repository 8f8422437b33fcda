package plugin

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestStartWatch: a plugin that uses no CPU is given up after the
// timeout; one that keeps using it is given up only at the hard bound
// (startHardFactor timeouts); where the CPU cannot be measured the
// timeout is wall time; a start that ends first is not given up.
func TestStartWatch(t *testing.T) {
	const timeout = 100 * time.Millisecond
	tests := []struct {
		name     string
		cpu      func(n int64) (time.Duration, bool)
		min, max time.Duration // when it must be given up
		ended    bool          // the start ends (after 3 timeouts) before
	}{
		{"no progress", func(int64) (time.Duration, bool) { return 10 * time.Millisecond, true }, timeout, startHardFactor * timeout / 2, false},
		{"progress", func(n int64) (time.Duration, bool) { return time.Duration(n) * time.Millisecond, true }, startHardFactor * timeout, time.Minute, false},
		{"not measurable", func(int64) (time.Duration, bool) { return 0, false }, timeout, startHardFactor * timeout / 2, false},
		{"ended before", func(n int64) (time.Duration, bool) { return time.Duration(n) * time.Millisecond, true }, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			gaveUp := make(chan time.Duration, 1)
			start := time.Now()
			w := &startWatch{tag: "t", timeout: timeout, now: time.Now,
				cpu:  func(string) (time.Duration, bool) { return tt.cpu(n.Add(1)) },
				stop: make(chan struct{}), done: make(chan struct{})}
			go w.run(func() { gaveUp <- time.Since(start) })
			if tt.ended {
				time.Sleep(3 * timeout) // the start takes this long
				if w.end() {
					t.Fatal("a start that ended in time was given up")
				}
				return
			}
			select {
			case after := <-gaveUp:
				if after < tt.min || after > tt.max {
					t.Errorf("given up after %v, want between %v and %v", after, tt.min, tt.max)
				}
			case <-time.After(time.Minute):
				t.Fatal("never given up")
			}
			if !w.end() {
				t.Error("end does not report the give-up")
			}
		})
	}
}
