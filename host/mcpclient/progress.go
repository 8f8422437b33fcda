package mcpclient

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callState routes the progress notifications of one call.
type callState struct {
	tool     *Tool
	id       string
	progress chan struct{}
	notify   func(toolset.Progress)
	// seen counts the call's progress notifications read off the wire,
	// handled those delivered (see wire.go).
	seen    atomic.Int64
	handled counter
	// sentAt is where the call's request starts on a stdio server's
	// stdin; -1 until it is written.
	sentAt atomic.Int64
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
	defer st.handled.add(1)
	select {
	case st.progress <- struct{}{}:
	default:
	}
	if st.notify != nil {
		st.notify(toolset.Progress{Server: s.cfg.Name, Tool: st.tool.name, ToolCallID: st.id,
			Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}
