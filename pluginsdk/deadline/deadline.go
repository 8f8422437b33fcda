// Package deadline holds the rule by which a plugin call that ends a
// moment before its deadline counts as ended by it.
//
// The deadline of a call travels with it to the plugin (gRPC sends it
// along), so the plugin may end the call a moment before the caller's own
// timer fires, particularly on a loaded machine. The host's toolset and
// plugintest both wait that moment out (Await) before they judge how a
// call ended, so that a call the deadline ended is reported as timed out
// whichever side noticed first.
package deadline

import (
	"context"
	"time"
)

// Slack is how close to its deadline a call may end and still count as
// ended by the deadline.
const Slack = 250 * time.Millisecond

// Await waits for ctx to end when its deadline is at most Slack away, and
// at most until Slack after the deadline; it returns at once otherwise.
func Await(ctx context.Context) {
	dl, ok := ctx.Deadline()
	if !ok || ctx.Err() != nil {
		return
	}
	left := time.Until(dl)
	if left > Slack {
		return
	}
	t := time.NewTimer(max(left, 0) + Slack)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
