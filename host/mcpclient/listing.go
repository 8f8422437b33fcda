package mcpclient

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools are the server's tools to load (enabled_tools and disabled_tools
// applied), named as in the toolset.
func (s *Server) Tools() []*Tool {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	return slices.Clone(s.tools)
}

// Offered lists every tool the server offers, by its own names.
func (s *Server) Offered() []string {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	return slices.Clone(s.offered)
}

// Watch has fn told the server's tools each time they change: when the
// server sends notifications/tools/list_changed, it is listed again and fn
// gets the tools to load now, replacing those it had. If they changed
// between Start and Watch, fn is told at once. fn runs on a goroutine of
// the client's, one change at a time.
func (s *Server) Watch(fn func([]*Tool)) {
	s.relist.Lock()
	defer s.relist.Unlock()
	s.toolsMu.Lock()
	s.watch = fn
	changed, tools := s.changed, slices.Clone(s.tools)
	s.toolsMu.Unlock()
	if changed {
		fn(tools)
	}
}

// setTools keeps what tools/list answered; relisted says it is not Start's
// listing.
func (s *Server) setTools(listed []*mcp.Tool, relisted bool) (tools []*Tool, watch func([]*Tool)) {
	var offered []string
	var refused []Status
	for _, t := range listed {
		offered = append(offered, t.Name)
		if !s.cfg.Wants(t.Name) {
			continue
		}
		if s.tasks.requires(t.Name) {
			refused = append(refused, Status{Server: s.cfg.Name, Name: s.cfg.ToolName(t.Name), Source: s.source, Err: taskReason(s.cfg.Name, t.Name)})
			continue
		}
		tools = append(tools, newTool(s, t))
	}
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	s.tools, s.offered, s.refused = tools, offered, refused
	s.changed = s.changed || relisted
	return slices.Clone(tools), s.watch
}

// handleToolsChanged lists the tools again, off the client's receiving
// goroutine (tools/list is answered on it).
func (s *Server) handleToolsChanged(_ context.Context, req *mcp.ToolListChangedRequest) {
	go s.relistTools(req.Session)
}

// relistTools lists the tools on cs again and tells the watcher. It runs
// after a list_changed, and after a restart: a restarted server may have
// come back with other tools.
func (s *Server) relistTools(cs *mcp.ClientSession) {
	s.relist.Lock()
	defer s.relist.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.StartTimeout)
	defer cancel()
	var listed []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			if !s.closed.Load() {
				s.logger.Warn("listing the tools of an MCP server again failed; keeping the old list", "server", s.cfg.Name, "error", err)
			}
			return
		}
		listed = append(listed, t)
	}
	tools, watch := s.setTools(listed, true)
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.name
	}
	s.logger.Info("MCP server changed its tools", "server", s.cfg.Name, "tools", names)
	if watch != nil {
		watch(tools)
	}
}
