package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskTools notes the tools a server's tools/list marks as requiring task
// augmentation (MCP `execution.taskSupport: "required"`): such a tool
// answers a plain tools/call with an error, so it is left out, with the
// reason, until the client supports tasks. The go-sdk's Tool has no field
// for it, so the answers are read on the wire.
type taskTools struct {
	mu       sync.Mutex
	lists    map[jsonrpc.ID]bool // ids of tools/list requests in flight
	required map[string]bool
}

func (tt *taskTools) requires(name string) bool {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.required[name]
}

// spyTransport wraps a transport's connections so that tt sees its
// tools/list answers and srv its notifications as they are read (see
// wire.go), and, for stdio, where each call's request starts on the
// server's stdin.
type spyTransport struct {
	mcp.Transport
	tt  *taskTools
	srv *Server
	c   *conn
}

func (t *spyTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &spyConn{Connection: c, tt: t.tt, srv: t.srv, c: t.c}, nil
}

type spyConn struct {
	mcp.Connection
	tt  *taskTools
	srv *Server
	c   *conn
	mu  sync.Mutex // writes, so that a request's offset on stdin is known
}

func (c *spyConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.tt.mu.Lock()
		if c.tt.lists == nil {
			c.tt.lists = map[jsonrpc.ID]bool{}
		}
		c.tt.lists[req.ID] = true
		c.tt.mu.Unlock()
	}
	in := c.c.stdin
	if in == nil {
		return c.Connection.Write(ctx, msg)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok && req.Method == "tools/call" {
		if st := c.srv.callOf(req.Params); st != nil {
			st.sentAt.Store(in.written.Load())
		}
	}
	return c.Connection.Write(ctx, msg)
}

// callOf is the call whose tools/call request has params.
func (s *Server) callOf(params json.RawMessage) *callState {
	var p struct {
		Meta struct {
			Token any `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || p.Meta.Token == nil {
		return nil
	}
	if v, ok := s.calls.Load(fmt.Sprint(p.Meta.Token)); ok {
		return v.(*callState)
	}
	return nil
}

func (c *spyConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && err == nil && !req.ID.IsValid() {
		c.srv.sawNotification(req.Method, req.Params)
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.tt.mu.Lock()
		if c.tt.lists[resp.ID] {
			delete(c.tt.lists, resp.ID)
			var page struct {
				Tools []struct {
					Name      string `json:"name"`
					Execution struct {
						TaskSupport string `json:"taskSupport"`
					} `json:"execution"`
				} `json:"tools"`
			}
			if json.Unmarshal(resp.Result, &page) == nil {
				if c.tt.required == nil {
					c.tt.required = map[string]bool{}
				}
				for _, t := range page.Tools {
					c.tt.required[t.Name] = t.Execution.TaskSupport == "required"
				}
			}
		}
		c.tt.mu.Unlock()
	}
	return msg, err
}

// Refused are the status rows of the tools the server offers but that are
// not loaded for a reason of the client's (task augmentation required).
func (s *Server) Refused() []Status {
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	return slices.Clone(s.refused)
}

// taskReason says why a tool that requires tasks is left out.
func taskReason(server, tool string) error {
	return fmt.Errorf("MCP tool %s of server %s requires task augmentation (execution.taskSupport: required), which kosong-host does not support yet; it is left out", tool, server)
}
