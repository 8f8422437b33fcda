package plugin

import (
	"context"

	"github.com/kosong-host/kosong-host/host/capability"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// routeProgress registers the progress sink of call id with the plugin's
// capability server until the returned function is called. Each report
// restarts the call's timeout clock and goes, at the rate the capability
// server passes reports on (limits.ProgressInterval), where MCP progress goes: the
// callback on ctx (toolset.WithProgress, set by `mcp serve`), else
// Options.OnProgress (the terminal line, stream-json tool_progress).
func (t *tool) routeProgress(ctx context.Context, id string) (unregister func()) {
	if t.plugin.host == nil || t.plugin.host.Progress == nil {
		return func() {}
	}
	notify := toolset.ProgressFunc(ctx)
	if notify == nil {
		notify = t.onProgress
	}
	return t.plugin.host.Progress.Register(id, func() { toolset.KeepAlive(ctx) }, func(r capability.ProgressReport) {
		if notify != nil {
			notify(toolset.Progress{Server: t.plugin.Name(), Tool: t.spec.Name, ToolCallID: id,
				Progress: r.Progress, Total: r.Total, Message: r.Message})
		}
	})
}
