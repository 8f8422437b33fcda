// Package mcpclient gives an agent the tools of MCP servers (stdio,
// streamable HTTP or HTTP+SSE), through the official go-sdk, as toolset
// tools.
//
// Each server is started once when the agent loads (all in parallel, each
// bounded by a start timeout; one that fails is reported, never fatal) and
// supervised like a plugin: a stdio server runs in its own process group
// with a minimal environment plus its own env, its stderr is kept for error
// messages, a server that stops is restarted for the next call (the first
// restart at once, then with a doubling backoff, at most MaxRestarts times in
// RestartWindow; then its tools answer "MCP server NAME is down: REASON"),
// and Close kills the process group.
//
// Every call asks approval (action "mcp:TOOL", TOOL being the name in the
// toolset), has a timeout that each progress notification resets, sends an
// MCP cancellation when it is cancelled (the go-sdk does), and maps the
// result's content to content parts within an output budget.
//
// A server that sends notifications/tools/list_changed is listed again, and
// whoever Watches it is given its new tools.
package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/launcher"
	"github.com/kosong-host/kosong-host/host/spec"
)

// Defaults and limits.
const (
	// DefaultCallTimeout bounds a call that reports no progress; a server's
	// `timeout` replaces it.
	DefaultCallTimeout = 60 * time.Second
	// DefaultStartTimeout bounds starting a server: the process, the MCP
	// handshake and listing its tools.
	DefaultStartTimeout = 30 * time.Second
	// MaxRestarts restarts of a server are allowed in RestartWindow.
	MaxRestarts   = 3
	RestartWindow = time.Minute
	// DefaultRestartBackoff is the delay before the second restart in the
	// window; it doubles for each further one (the first is immediate).
	DefaultRestartBackoff = 250 * time.Millisecond
	// closeGrace is how long a stdio server may take to exit once its stdin
	// is closed before its process group is killed.
	closeGrace = 2 * time.Second
)

// Options are shared by the servers of an agent.
type Options struct {
	// Decider answers the approval request of every call; nil rejects them.
	Decider approval.Decider
	Logger  hclog.Logger
	// Getenv reads the host environment (the minimal environment of stdio
	// servers, ${NAME} in env and headers); nil means os.Getenv.
	Getenv func(string) string
	// WorkDir is the working directory of stdio servers without `cwd`; ""
	// is the host's.
	WorkDir string
	// StartTimeout defaults to DefaultStartTimeout.
	StartTimeout time.Duration
	// RestartBackoff defaults to DefaultRestartBackoff.
	RestartBackoff time.Duration
	// OnProgress receives the progress notifications of every call whose
	// context carries no callback of its own (see WithProgress).
	OnProgress func(Progress)
	// Version is the client version sent to servers.
	Version string
}

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

// ProgressFunc is the callback WithProgress set on ctx, or nil. Other tool
// sources (plugins) report their calls' progress to it too.
func ProgressFunc(ctx context.Context) func(Progress) {
	fn, _ := ctx.Value(progressKey{}).(func(Progress))
	return fn
}

// Server is one supervised MCP server.
type Server struct {
	cfg     spec.MCPServer
	opts    Options
	logger  hclog.Logger
	source  string
	timeout time.Duration
	client  *mcp.Client

	tokens atomic.Int64
	calls  sync.Map // progress token -> *callState

	relist  sync.Mutex // one tools/list after a list_changed at a time
	toolsMu sync.Mutex
	tools   []*Tool
	offered []string // every tool the server listed
	watch   func([]*Tool)
	changed bool // the tools were listed again since Start

	mu       sync.Mutex
	conn     *conn
	starting chan struct{} // closed when a (re)start in progress ends
	restarts []time.Time
	lastDown time.Time
	reason   string // why the last connection ended
	closed   bool
}

// conn is one connection to the server (one process, for stdio).
type conn struct {
	cs     *mcp.ClientSession
	pid    int
	stderr *launcher.Tail
	done   chan struct{}
	once   sync.Once
	reason string // set before done is closed
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

// close ends the session and kills the process group.
func (c *conn) close() {
	c.end("closed")
	closed := make(chan struct{})
	go func() { _ = c.cs.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(closeGrace):
	}
	launcher.KillGroup(c.pid)
}

// Name is the server's name.
func (s *Server) Name() string { return s.cfg.Name }

// Source describes the server for tools lists: "mcp server NAME (COMMAND ARGS)"
// or "mcp server NAME (URL)".
func (s *Server) Source() string { return s.source }

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
	for _, t := range listed {
		offered = append(offered, t.Name)
		if s.cfg.Wants(t.Name) {
			tools = append(tools, newTool(s, t))
		}
	}
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	s.tools, s.offered = tools, offered
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
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if !closed {
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

// Start starts the server, completes the MCP handshake and lists its tools,
// within opts.StartTimeout.
func Start(ctx context.Context, cfg spec.MCPServer, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.RestartBackoff <= 0 {
		opts.RestartBackoff = DefaultRestartBackoff
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{cfg: cfg, opts: opts, logger: opts.Logger.Named("mcp." + cfg.Name), source: source(cfg), timeout: cfg.Timeout}
	if s.timeout <= 0 {
		s.timeout = DefaultCallTimeout
	}
	s.client = mcp.NewClient(&mcp.Implementation{Name: "kosong-host", Version: opts.Version}, &mcp.ClientOptions{
		// No roots, sampling or elicitation: the server gets tools calls only.
		Capabilities:                &mcp.ClientCapabilities{},
		ProgressNotificationHandler: s.handleProgress,
		ToolListChangedHandler:      s.handleToolsChanged,
	})

	sctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	c, err := s.connect(sctx)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: %w", cfg.Name, err)
	}
	var listed []*mcp.Tool
	for t, err := range c.cs.Tools(sctx, nil) {
		if err != nil {
			c.close()
			if sctx.Err() != nil && ctx.Err() == nil {
				return nil, fmt.Errorf("MCP server %s: tools/list got no answer within %s%s", cfg.Name, opts.StartTimeout, c.stderrSuffix())
			}
			return nil, fmt.Errorf("MCP server %s: tools/list: %v%s", cfg.Name, err, c.stderrSuffix())
		}
		listed = append(listed, t)
	}
	s.conn = c
	s.setTools(listed, false)
	return s, nil
}

// source describes cfg in one line.
func source(cfg spec.MCPServer) string {
	if cfg.Stdio() {
		return fmt.Sprintf("mcp server %s (%s)", cfg.Name, strings.Join(append([]string{cfg.Command}, cfg.Args...), " "))
	}
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return "mcp server " + cfg.Name
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return fmt.Sprintf("mcp server %s (%s)", cfg.Name, u)
}

// connect starts a new connection: for stdio, a new process.
func (s *Server) connect(ctx context.Context) (*conn, error) {
	c := &conn{done: make(chan struct{})}
	var transport mcp.Transport
	var cmd *exec.Cmd
	if s.cfg.Stdio() {
		cmd = exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Env = s.env()
		cmd.Dir = s.cfg.Cwd
		if cmd.Dir == "" {
			cmd.Dir = s.opts.WorkDir
		}
		c.stderr = launcher.NewTail(20)
		cmd.Stderr = c.stderr
		// A process the server started may keep stderr open: do not wait
		// for it forever.
		cmd.WaitDelay = closeGrace
		launcher.Isolate(cmd)
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	} else {
		headers := http.Header{}
		for k, v := range s.cfg.Headers {
			headers.Set(k, expand(v, s.opts.Getenv))
		}
		client := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: headers}}
		if s.cfg.SSE {
			transport = &sseTransport{mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: client}}
		} else {
			transport = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: client, DisableStandaloneSSE: true}
		}
	}
	cs, err := s.client.Connect(ctx, transport, nil)
	if cmd != nil && cmd.Process != nil {
		c.pid = cmd.Process.Pid
	}
	if err != nil {
		launcher.KillGroup(c.pid)
		return nil, s.startError(ctx, err, c)
	}
	c.cs = cs
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

// env is a stdio server's environment: launcher.BaseEnv from the host, then
// the server's env with ${NAME} expanded.
func (s *Server) env() []string {
	var env []string
	for _, name := range launcher.BaseEnv {
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

var varRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand replaces ${NAME} with the host's variable NAME ("" if unset).
func expand(v string, getenv func(string) string) string {
	return varRE.ReplaceAllStringFunc(v, func(m string) string { return getenv(m[2 : len(m)-1]) })
}

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

// downError is the error of a server that may not be restarted now.
func (s *Server) downError() error {
	return fmt.Errorf("MCP server %s is down: %s", s.cfg.Name, s.reason)
}

// checkDown reports a server that is down and may not be restarted yet, so
// a call does not ask approval for nothing.
func (s *Server) checkDown() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("MCP server %s is closed", s.cfg.Name)
	}
	if (s.conn == nil || !s.conn.alive()) && s.starting == nil && len(s.recentRestarts(time.Now())) >= MaxRestarts {
		return s.downError()
	}
	return nil
}

func (s *Server) recentRestarts(now time.Time) []time.Time {
	s.restarts = slices.DeleteFunc(s.restarts, func(t time.Time) bool { return now.Sub(t) >= RestartWindow })
	return s.restarts
}

// acquire returns a live connection, restarting the server if it stopped.
func (s *Server) acquire(ctx context.Context) (*conn, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, fmt.Errorf("MCP server %s is closed", s.cfg.Name)
		}
		if c := s.conn; c != nil && c.alive() {
			s.mu.Unlock()
			return c, nil
		}
		if ch := s.starting; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, fmt.Errorf("the call was cancelled: %w", context.Cause(ctx))
			}
		}
		old := s.conn
		if old != nil {
			s.noteDown(old)
			s.conn = nil
			go old.close()
		}
		now := time.Now()
		recent := s.recentRestarts(now)
		if len(recent) >= MaxRestarts {
			err := s.downError()
			s.mu.Unlock()
			return nil, err
		}
		var delay time.Duration
		if n := len(recent); n > 0 {
			delay = s.opts.RestartBackoff<<(n-1) - now.Sub(s.lastDown)
		}
		ch := make(chan struct{})
		s.starting = ch
		s.restarts = append(s.restarts, now)
		s.mu.Unlock()

		c, err := s.restart(ctx, delay)
		s.mu.Lock()
		s.starting = nil
		if err == nil && !s.closed {
			s.conn = c
		} else if err == nil {
			go c.close()
			err = fmt.Errorf("MCP server %s is closed", s.cfg.Name)
		} else {
			s.reason, s.lastDown = err.Error(), time.Now()
		}
		close(ch)
		s.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: restart: %w", s.cfg.Name, err)
		}
		s.logger.Info("restarted MCP server", "server", s.cfg.Name)
		go s.relistTools(c.cs)
		return c, nil
	}
}

// noteDown records why c ended. s.mu is held.
func (s *Server) noteDown(c *conn) {
	<-c.done
	s.reason, s.lastDown = c.reason, time.Now()
}

func (s *Server) restart(ctx context.Context, delay time.Duration) (*conn, error) {
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("the call was cancelled: %w", context.Cause(ctx))
		}
	}
	sctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	return s.connect(sctx)
}

// fail records that c failed a call as a dead connection does, waiting
// (briefly) for a stdio server's exit to be seen, and returns why it ended.
func (s *Server) fail(c *conn, err error) string {
	if c.pid > 0 {
		select {
		case <-c.done:
		case <-time.After(closeGrace):
		}
	}
	c.end(err.Error() + c.stderrSuffix())
	return c.reason
}

// Close stops the server for good.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	c := s.conn
	s.conn = nil
	if s.reason == "" {
		s.reason = "the agent was closed"
	}
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
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
