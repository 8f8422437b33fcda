package mcpclient

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress is a progress notification of a running call.
type Progress struct {
	Server     string
	Tool       string // the name in the toolset
	ToolCallID string
	Progress   float64
	Total      float64 // 0 = unknown
	Message    string
}

type progressKey struct{}

// WithProgress returns a context whose MCP tool calls report their progress
// to fn (instead of Options.OnProgress). fn runs on the client's receiving
// goroutine: it must return quickly.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// callState routes the progress notifications of one call.
type callState struct {
	tool     *Tool
	id       string
	progress chan struct{}
	notify   func(Progress)
}

func (s *Server) handleProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	v, ok := s.calls.Load(fmt.Sprint(p.ProgressToken))
	if !ok {
		return
	}
	st := v.(*callState)
	select {
	case st.progress <- struct{}{}:
	default:
	}
	if st.notify != nil {
		st.notify(Progress{Server: s.cfg.Name, Tool: st.tool.name, ToolCallID: st.id,
			Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}
