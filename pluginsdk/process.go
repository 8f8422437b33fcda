package pluginsdk

import "sync"

var processGroups sync.Map // pgid -> struct{}

// TrackProcessGroup registers a process group the tool started (a command
// run in its own group, say), so that it is killed when the plugin ends:
// when the host stops the plugin (Serve kills the tracked groups before it
// returns) and when the host disappears without cancelling the call. Call
// the returned function once the group is done.
func TrackProcessGroup(pgid int) (untrack func()) {
	processGroups.Store(pgid, struct{}{})
	return func() { processGroups.Delete(pgid) }
}

// killTrackedGroups kills every tracked process group.
func killTrackedGroups() {
	processGroups.Range(func(pgid, _ any) bool {
		killGroup(pgid.(int))
		return true
	})
}
