package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/proc"
	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/spec"
)

// conn is one connection to the server (one process, for stdio): a
// supervise.Process.
type conn struct {
	cs     *mcp.ClientSession
	pid    int
	tag    string // marks a stdio server and what it starts (proc.TagEnv)
	stderr *proc.Tail
	stdin  *stdinPipe // a stdio server's stdin
	// eventStream is set while a streamable HTTP server's standalone
	// event stream is open.
	eventStream atomic.Bool
	done        chan struct{}
	once        sync.Once
	reason      string // set before done is closed
}

func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// end records why the connection ended, once.
func (c *conn) end(reason string) {
	c.once.Do(func() { c.reason = reason; close(c.done) })
}

// Done is closed when the connection has ended.
func (c *conn) Done() <-chan struct{} { return c.done }

// Reason says why the connection ended.
func (c *conn) Reason() string {
	if c.alive() {
		return "the connection is open"
	}
	return c.reason
}

// Ping sends an MCP ping.
func (c *conn) Ping(ctx context.Context) error { return c.cs.Ping(ctx, nil) }

// Kill kills a stdio server's process group at once, whatever the server is
// doing, and ends the session.
func (c *conn) Kill() {
	c.end("the host killed the server")
	proc.KillGroup(c.pid)
	proc.KillTagged(c.tag)
	c.closeSession()
}

// Close ends the session (a stdio server's stdin is closed, and it is
// given closeGrace to exit) and then kills the process group.
func (c *conn) Close() {
	c.end("closed")
	c.closeSession()
	proc.KillGroup(c.pid)
	proc.KillTagged(c.tag)
}

// closeSession closes the session, waiting at most closeGrace.
func (c *conn) closeSession() {
	closed := make(chan struct{})
	go func() { _ = c.cs.Close(); close(closed) }()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-closed:
	case <-t.C:
	}
}

// launcher is what a stdio server is started through: the host's launcher,
// told to apply the server's sandbox when it has one; none for a server
// without a sandbox when the host has already taken the dropped
// capabilities out of every child (proc.DirectStart): one exec, not two.
func (s *Server) launcher() []string {
	p := s.opts.Sandboxes[s.cfg.Name]
	if p == nil && proc.DirectStart() {
		return nil
	}
	if p == nil || len(s.opts.Launcher) == 0 {
		return s.opts.Launcher
	}
	return append(slices.Clone(s.opts.Launcher), sandbox.LauncherFlag, p.Marshal())
}

// connect starts a new connection: for stdio, a new process.
func (s *Server) connect(ctx context.Context) (*conn, error) {
	c := &conn{done: make(chan struct{})}
	var transport mcp.Transport
	var cmd *exec.Cmd
	if s.cfg.Stdio() {
		if err := CheckPin(s.cfg, s.opts.Pins[s.cfg.Name]); err != nil {
			return nil, err
		}
		cmd = proc.Command(s.launcher(), s.cfg.Command, s.cfg.Args...)
		c.tag = proc.NewTag()
		cmd.Env = append(s.env(), proc.TagVar(c.tag))
		cmd.Dir = s.cfg.Cwd
		if cmd.Dir == "" {
			cmd.Dir = s.opts.WorkDir
		}
		c.stderr = proc.NewTail(20)
		cmd.Stderr = c.stderr
		// A process the server started may keep stderr open: do not wait
		// for it forever.
		cmd.WaitDelay = closeGrace
		proc.Isolate(cmd)
		transport = &stdioTransport{cmd: cmd, srv: s, c: c}
	} else {
		headers := http.Header{}
		for k, v := range s.cfg.Headers {
			headers.Set(k, expand(v, s.opts.Getenv))
		}
		if s.cfg.SSE {
			client := &http.Client{Transport: headerTransport{base: httpTap{base: http.DefaultTransport, srv: s, c: c, start: ctx, legacy: true}, headers: headers}}
			transport = &sseTransport{mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: client, MaxEventSize: MaxMessageBytes}}
		} else {
			// The standalone event stream is opened when the server
			// offers it (a 405 says it does not), so that list_changed,
			// server requests and notifications outside a call arrive.
			client := &http.Client{Transport: headerTransport{base: httpTap{base: http.DefaultTransport, srv: s, c: c, start: ctx}, headers: headers}}
			transport = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: client, MaxEventSize: MaxMessageBytes}
		}
	}
	if _, streamable := transport.(*mcp.StreamableClientTransport); !streamable {
		// (The streamable connection must stay unwrapped: the go-sdk
		// tells it the session's state through an unexported method. Its
		// messages are watched in its HTTP bodies instead: httpTap.)
		transport = &spyTransport{Transport: transport, tt: &s.tasks, srv: s, c: c}
	}
	// A server that does not complete the handshake in time is killed at
	// once, not after the go-sdk's close sequence (stdin, SIGTERM, SIGKILL):
	// the start timeout is the whole delay a hung server causes.
	stop := context.AfterFunc(ctx, func() { proc.KillTagged(c.tag) })
	cs, err := s.client.Connect(ctx, transport, nil)
	stop()
	if cmd != nil && cmd.Process != nil {
		c.pid = cmd.Process.Pid
	}
	if err != nil {
		proc.KillGroup(c.pid)
		proc.KillTagged(c.tag)
		return nil, s.startError(ctx, err, c)
	}
	c.cs = cs
	s.session.Store(cs)
	go func() {
		err := cs.Wait()
		reason := "the connection was closed"
		if s.cfg.Stdio() {
			reason = "the server exited"
			if err != nil {
				reason += " (" + err.Error() + ")"
			}
		} else if err != nil {
			reason += ": " + err.Error()
		}
		c.end(reason + c.stderrSuffix())
		// A server that exited leaves nothing it started behind (npx's
		// node, say).
		proc.KillTagged(c.tag)
	}()
	return c, nil
}

func (s *Server) startError(ctx context.Context, err error, c *conn) error {
	var ee *exec.Error
	switch {
	case errors.As(err, &ee):
		return fmt.Errorf("start %s: %v", s.cfg.Command, ee.Err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("no answer to the MCP handshake within %s%s", s.opts.StartTimeout, c.stderrSuffix())
	case ctx.Err() != nil:
		return fmt.Errorf("start cancelled: %w", context.Cause(ctx))
	case s.cfg.Stdio():
		return fmt.Errorf("%s failed the MCP handshake: %v%s", s.cfg.Command, err, c.stderrSuffix())
	}
	return fmt.Errorf("connect to %s: %v", s.cfg.URL, err)
}

func (c *conn) stderrSuffix() string {
	if c.stderr == nil {
		return ""
	}
	if t := c.stderr.Last(3); t != "" {
		return "; its last stderr lines: " + t
	}
	return ""
}

// env is a stdio server's environment: proc.BaseEnv from the host, then
// the server's env with ${NAME} expanded.
func (s *Server) env() []string {
	var env []string
	for _, name := range proc.BaseEnv {
		if _, ok := s.cfg.Env[name]; ok {
			continue
		}
		if v := s.opts.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	names := make([]string, 0, len(s.cfg.Env))
	for name := range s.cfg.Env {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		env = append(env, name+"="+expand(s.cfg.Env[name], s.opts.Getenv))
	}
	return env
}

// expand replaces ${NAME} with the host's variable NAME ("" if unset).
func expand(v string, getenv func(string) string) string { return spec.ExpandVars(v, getenv) }

type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}

// sseTransport is the SDK's HTTP+SSE transport with an event stream that
// outlives the start: the SDK ties the stream's GET request to Connect's
// context, which here is bounded by the start timeout.
type sseTransport struct{ mcp.SSEClientTransport }

func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	type result struct {
		conn mcp.Connection
		err  error
	}
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan result, 1)
	go func() {
		c, err := t.SSEClientTransport.Connect(streamCtx)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			cancel()
			return nil, r.err
		}
		return sseConn{r.conn, cancel}, nil
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
}

// sseConn ends its event stream's request when closed.
type sseConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c sseConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}
