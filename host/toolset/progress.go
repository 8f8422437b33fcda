package toolset

import "context"

// Progress is a progress report of a running tool call, from whichever
// source runs it (an MCP server's notification, a plugin tool's Progress
// capability).
type Progress struct {
	// Server names the plugin or MCP server that runs the tool.
	Server     string
	Tool       string // the name in the toolset
	ToolCallID string
	Progress   float64
	Total      float64 // 0 = unknown
	Message    string
}

type progressKey struct{}

// WithProgress returns a context whose tool calls report their progress to
// fn instead of the source's default callback (`mcp serve` forwards them to
// its client this way). fn may run on a receiving goroutine: it must return
// quickly.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressFunc is the callback WithProgress set on ctx, or nil.
func ProgressFunc(ctx context.Context) func(Progress) {
	fn, _ := ctx.Value(progressKey{}).(func(Progress))
	return fn
}
