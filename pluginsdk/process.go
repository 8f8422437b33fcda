package pluginsdk

import "sync"

var processGroups sync.Map // pgid -> struct{}

// TrackProcessGroup registers a process group the tool started (a command
// run in its own group, say), so that it is killed with the plugin if the
// host disappears without cancelling the call. Call the returned function
// once the group is done.
func TrackProcessGroup(pgid int) (untrack func()) {
	processGroups.Store(pgid, struct{}{})
	return func() { processGroups.Delete(pgid) }
}
