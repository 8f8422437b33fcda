package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/proc"
	"github.com/kosong-host/kosong-host/host/telemetry"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// Tool is a tool of an MCP server, as the toolset runs it.
type Tool struct {
	srv    *Server
	name   string // in the toolset
	remote string // on the server
	spec   toolset.Spec
	// annotations are the server's hints (annotations.go).
	annotations toolset.Annotations
}

func newTool(s *Server, t *mcp.Tool) *Tool {
	params, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil || string(params) == "null" {
		params = []byte(`{"type":"object"}`)
	}
	name := s.cfg.ToolName(t.Name)
	return &Tool{srv: s, name: name, remote: t.Name, spec: toolset.Spec{
		Name: name, Description: t.Description, Parameters: params, Source: s.source,
		// Timeout stays 0: the call's own timeout is reset by progress.
	}, annotations: annotationsOf(t.Annotations)}
}

// Annotations are the tool's hints, as its server declares them.
func (t *Tool) Annotations() toolset.Annotations { return t.annotations }

// Spec describes the tool. Its Timeout is 0: the tool times out by itself,
// after the server's timeout without progress.
func (t *Tool) Spec() toolset.Spec { return t.spec }

// Server is the tool's server.
func (t *Tool) Server() *Server { return t.srv }

// RemoteName is the tool's name on its server.
func (t *Tool) RemoteName() string { return t.remote }

// errIdle cancels a call that went a whole timeout without progress,
// errHardMax one that reached the hard maximum.
var (
	errIdle    = errors.New("no progress within the timeout")
	errHardMax = errors.New("the hard maximum of a call")
)

// Call asks approval, then calls the tool on its server (restarting the
// server if it stopped).
func (t *Tool) Call(ctx context.Context, id string, args json.RawMessage) toolset.Result {
	if err := t.srv.checkDown(); err != nil {
		return toolset.RuntimeError(err)
	}
	if r, ok := t.approve(ctx, id, args); !ok {
		return r
	}
	c, err := t.srv.acquire(ctx)
	if err != nil {
		return toolset.RuntimeError(err)
	}
	if c.pid > 0 && !proc.Alive(c.pid) {
		// The stdio server died before the request was written (and
		// before the client saw it go): restart it and send it there.
		t.srv.fail(c, errors.New("the server exited"))
		if c, err = t.srv.acquire(ctx); err != nil {
			return toolset.RuntimeError(err)
		}
	}
	r, lost := t.call(ctx, c, id, args)
	if lost {
		// The request never reached the server (its stdin was closed, or
		// the HTTP server forgot the session): it runs again, once, on a
		// restarted server or a new session.
		if c, err = t.srv.acquire(ctx); err != nil {
			return toolset.RuntimeError(err)
		}
		r, _ = t.call(ctx, c, id, args)
	}
	return r
}

func (t *Tool) approve(ctx context.Context, id string, args json.RawMessage) (toolset.Result, bool) {
	d := t.srv.opts.Decider
	if d == nil {
		return toolset.RejectedResult(""), false
	}
	brief := t.name + " " + string(args)
	if r := []rune(brief); len(r) > 300 {
		brief = string(r[:300]) + "…"
	}
	data, _ := json.Marshal(brief)
	dec, err := d.Decide(ctx, approval.Request{
		ToolCallID: id, Plugin: "mcp:" + t.srv.cfg.Name, ToolName: t.name,
		Action:      "mcp:" + t.name,
		Description: fmt.Sprintf("Call MCP tool `%s`.", t.name),
		Display:     []approval.Display{{Kind: "brief", Data: data}},
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return toolset.RuntimeError(fmt.Errorf("the call was cancelled: %w", context.Cause(ctx))), false
	case err != nil:
		return toolset.RuntimeError(fmt.Errorf("approval: %w", err)), false
	case !dec.Approved:
		return toolset.RejectedResult(dec.Feedback), false
	}
	return toolset.Result{}, true
}

// call runs the call on c. lost reports a session the HTTP server no longer
// knows, before the call ran.
func (t *Tool) call(ctx context.Context, c *conn, id string, args json.RawMessage) (r toolset.Result, lost bool) {
	s := t.srv
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	notify := toolset.ProgressFunc(ctx)
	if notify == nil {
		notify = s.opts.OnProgress
	}
	st := &callState{tool: t, id: id, progress: make(chan struct{}, 1), notify: notify}
	st.sentAt.Store(-1)
	changes := s.changesSeen.get()
	token := fmt.Sprintf("kosong-%d", s.tokens.Add(1))
	s.calls.Store(token, st)
	defer s.calls.Delete(token)
	go func() {
		timer := time.NewTimer(s.timeout)
		defer timer.Stop()
		hard := time.NewTimer(s.maxCall)
		defer hard.Stop()
		for {
			select {
			case <-st.progress:
				timer.Reset(s.timeout)
			case <-timer.C:
				cancel(errIdle)
				return
			case <-hard.C:
				cancel(errHardMax)
				return
			case <-cctx.Done():
				return
			}
		}
	}()

	params := &mcp.CallToolParams{Name: t.remote, Arguments: args}
	params.SetProgressToken(token)
	// The trace context of the call's span, where MCP servers look for it
	// (params._meta.traceparent, tracestate).
	for k, v := range telemetry.MCP(ctx, s.source) {
		params.Meta[k] = v
	}
	// Should the call be cancelled or time out, the server must still
	// answer within the grace period, or it is killed and restarted.
	release := s.sup.Guard(cctx, c)
	res, err := c.cs.CallTool(cctx, params)
	release()
	var rpcErr *jsonrpc.Error
	answered := err == nil || errors.As(err, &rpcErr)
	if answered && cctx.Err() == nil {
		// The server answered: what it sent before its answer is
		// handled before the answer is, its progress and a change of its
		// tools (which the next step then sees).
		st.handled.wait(ctx, st.seen.Load(), barrierWait)
		if s.changesSeen.get() == changes && c.offersListChanged() {
			s.changesSeen.wait(ctx, changes+1, streamSettle)
		}
		s.awaitRelist(ctx)
	}
	switch {
	case err == nil:
		return convert(res), false
	case ctx.Err() != nil:
		return toolset.RuntimeError(fmt.Errorf("the call was cancelled: %w", context.Cause(ctx))), false
	case errors.Is(context.Cause(cctx), errIdle):
		msg := fmt.Sprintf("MCP tool %s timed out after %s without progress", t.name, s.timeout)
		return toolset.Result{Kind: toolset.Failed, Message: msg, Brief: "Timed out"}, false
	case errors.Is(context.Cause(cctx), errHardMax):
		msg := fmt.Sprintf("MCP tool %s was stopped at the hard maximum of %s for one call (progress restarts its %s timeout, up to that bound)", t.name, s.maxCall, s.timeout)
		return toolset.Result{Kind: toolset.Failed, Message: msg, Brief: "Timed out"}, false
	}
	if rpcErr != nil {
		// The server answered with an error: it is still there.
		return toolset.RuntimeError(fmt.Errorf("MCP server %s: %s", s.cfg.Name, rpcErr.Message)), false
	}
	reason := s.fail(c, err)
	if errors.Is(err, mcp.ErrSessionMissing) || unsent(err) || (c.stdin != nil && c.stdin.neverRead(st.sentAt.Load())) {
		// The server never got the request (for stdio: it is still
		// unread in the server's stdin, or was never written).
		return toolset.Result{}, true
	}
	return toolset.RuntimeError(fmt.Errorf("MCP server %s stopped during the call: %s", s.cfg.Name, reason)), false
}

// unsent reports an error of writing the request to a stdio server whose
// stdin is closed: the server never got it.
func unsent(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe)
}

// offersListChanged reports a streamable HTTP server whose event stream is
// open and that says it sends list_changed.
func (c *conn) offersListChanged() bool {
	if !c.eventStream.Load() {
		return false
	}
	r := c.cs.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Tools != nil && r.Capabilities.Tools.ListChanged
}
