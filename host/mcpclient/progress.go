package mcpclient

import (
	"context"
	"fmt"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callState routes the progress notifications of one call.
type callState struct {
	tool     *Tool
	id       string
	progress chan struct{}
	notify   func(toolset.Progress)
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
		st.notify(toolset.Progress{Server: s.cfg.Name, Tool: st.tool.name, ToolCallID: st.id,
			Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}
