package pluginrpc

import (
	"context"
	"os"
	"sync"
	"time"
)

// DefaultCancelGrace is how long a tool may keep running after its call was
// cancelled or timed out. A tool still running after it takes the plugin
// down with it, so the host can restart a plugin that is known to be sane.
const DefaultCancelGrace = 5 * time.Second

func cancelGrace() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(CancelGraceEnv)); err == nil && d > 0 {
		return d
	}
	return DefaultCancelGrace
}

// watchdog arms a timer when ctx ends; unless the handler returns (the
// returned stop is called) before it fires, overrun runs.
func watchdog(ctx context.Context, grace time.Duration, overrun func()) (stop func()) {
	var mu sync.Mutex
	var timer *time.Timer
	stopped := false
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			timer = time.AfterFunc(grace, overrun)
		}
	})
	return func() {
		stopAfter()
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		if timer != nil {
			timer.Stop()
		}
	}
}
