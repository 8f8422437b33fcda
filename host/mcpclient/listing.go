package mcpclient

import (
	"context"
	"slices"
	"time"

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

// relistInterval is the least time between two listings after
// list_changed: a storm of notifications costs a few listings a second.
const relistInterval = 250 * time.Millisecond

// handleToolsChanged is the go-sdk's handler of list_changed. The wire
// (wire.go) has seen the notification first and asked for the listing; a
// notification it missed is asked for here.
func (s *Server) handleToolsChanged(context.Context, *mcp.ToolListChangedRequest) {
	if s.handlerChanges.Add(1) > s.changesSeen.get() {
		s.changesSeen.add(1)
		s.requestRelist()
	}
}

// requestRelist has the tools listed again, on the current connection:
// at once if no listing is running and none ran within relistInterval,
// else once after the one running; requests meanwhile are one.
func (s *Server) requestRelist() {
	s.relistMu.Lock()
	defer s.relistMu.Unlock()
	s.relistPending = true
	if s.relistRunning || !s.started {
		return
	}
	s.relistRunning = true
	go s.relistLoop()
}

func (s *Server) relistLoop() {
	for {
		s.relistMu.Lock()
		if !s.relistPending || s.closed.Load() {
			s.relistRunning = false
			s.relistMu.Unlock()
			return
		}
		wait := time.Until(s.lastRelist.Add(relistInterval))
		s.relistMu.Unlock()
		if wait > 0 {
			time.Sleep(wait) // the rate limit: requests meanwhile join this listing
		}
		s.relistMu.Lock()
		s.relistPending = false
		s.lastRelist = time.Now()
		s.relistMu.Unlock()
		// Every list_changed read so far is answered by this listing.
		target := s.changesSeen.get()
		if cs := s.session.Load(); cs != nil {
			s.relistTools(cs)
		}
		s.relisted.raise(target)
	}
}

// awaitRelist waits (within barrierWait) until the list_changed
// notifications read so far were answered by a listing and the watcher
// was told, so that the step after a call that changed the server's tools
// sees them.
func (s *Server) awaitRelist(ctx context.Context) {
	if want := s.changesSeen.get(); s.relisted.get() < want {
		s.relisted.wait(ctx, want, barrierWait)
	}
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
