// Package mcpclient gives an agent the tools of MCP servers (stdio,
// streamable HTTP or HTTP+SSE), through the official go-sdk, as toolset
// tools.
//
// Each server is started once when the agent loads (all in parallel, each
// bounded by a start timeout; one that fails is reported, never fatal) and
// supervised by host/supervise, as plugins are: a stdio server runs in its
// own process group with a minimal environment plus its own env, its stderr
// is kept for error messages, a server that stops is restarted for the next
// call within the restart policy (then its tools answer "MCP server NAME is
// down: REASON"), a server that does not answer within the grace period
// after a call was cancelled or timed out is killed and restarted, and
// Close kills the process group.
//
// Every call asks approval (action "mcp:TOOL", TOOL being the name in the
// toolset), has a timeout that each progress notification resets up to a
// hard maximum (MaxCallFactor times the timeout), sends an MCP
// cancellation when it is cancelled (the go-sdk does), delivers the
// progress the server sent before its result, and maps the result's
// content to content parts within an output budget.
//
// A server that sends notifications/tools/list_changed is listed again (one
// listing at a time, a few a second at most), and whoever Watches it is
// given its new tools; a call during which they changed returns once they
// are given.
//
// The files: client.go starts a server, transport.go connects to it (a
// process or a URL; stdio.go runs a process on the host's pipes, with
// MaxMessageBytes), wire.go watches the messages as they are read,
// supervision.go keeps a connection for each call, listing.go follows its
// tools, tool.go and progress.go run calls.
package mcpclient

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/supervise"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// Defaults and limits.
const (
	// DefaultCallTimeout bounds a call that reports no progress; a server's
	// `timeout` replaces it.
	DefaultCallTimeout = 60 * time.Second
	// DefaultStartTimeout bounds starting a server: the process, the MCP
	// handshake and listing its tools (Codex's default); a server's
	// startup_timeout replaces it.
	DefaultStartTimeout = 10 * time.Second
	// MaxCallFactor bounds a call that keeps reporting progress: each
	// progress notification restarts the call's timeout, but no call runs
	// longer than MaxCallFactor times it (Options.CallMaximum replaces
	// the bound).
	MaxCallFactor = 10
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
	// RestartBackoff defaults to supervise.DefaultBackoff.
	RestartBackoff time.Duration
	// CancelGrace is how long a server may take to answer after a call was
	// cancelled or timed out before it is killed; 0 is supervise.DefaultGrace.
	CancelGrace time.Duration
	// CallMaximum is the hard maximum of one call, however much progress
	// it reports; 0 is MaxCallFactor times the server's timeout.
	CallMaximum time.Duration
	// OnProgress receives the progress notifications of every call whose
	// context carries no callback of its own (see WithProgress).
	OnProgress func(toolset.Progress)
	// StartupWait bounds how long LoadAll waits for the servers: one
	// still starting past it keeps starting and is delivered later
	// (Loaded.Late), so that it does not hold up the agent. 0 waits for
	// every server's start timeout.
	StartupWait time.Duration
	// Launcher, when set, is the command stdio servers are started through
	// (see proc.Command).
	Launcher []string
	// Sandboxes are the policies of the stdio servers to confine, by server
	// name: the launcher applies them (`plugin-exec --sandbox RULES`).
	Sandboxes map[string]*sandbox.Policy
	// Pins are the lock file's pins of stdio servers' commands, by server
	// name (CheckPin): a server whose command is another file is not
	// started.
	Pins map[string]Pin
	// Version is the client version sent to servers.
	Version string
}

// Server is one supervised MCP server.
type Server struct {
	cfg     spec.MCPServer
	opts    Options
	logger  hclog.Logger
	source  string
	timeout time.Duration
	maxCall time.Duration // the hard maximum of one call, progress or not
	client  *mcp.Client
	sup     *supervise.Supervisor[*conn]
	closed  atomic.Bool

	tokens atomic.Int64
	calls  sync.Map // progress token -> *callState

	session atomic.Pointer[mcp.ClientSession] // the latest connection's

	// list_changed: counted as read off the wire and by the go-sdk's
	// handler, answered by one listing at a time (listing.go).
	changesSeen    counter
	handlerChanges atomic.Int64
	relisted       counter // changesSeen as of the last listing done
	relistMu       sync.Mutex
	relistPending  bool
	relistRunning  bool
	started        bool // Start is done: listings may run
	lastRelist     time.Time

	relist  sync.Mutex // one tools/list after a list_changed at a time
	toolsMu sync.Mutex
	tools   []*Tool
	offered []string // every tool the server listed
	refused []Status // tools listed but left out (tasks required)
	tasks   taskTools
	watch   func([]*Tool)
	changed bool // the tools were listed again since Start
}

// Name is the server's name.
func (s *Server) Name() string { return s.cfg.Name }

// Source describes the server for tools lists: "mcp server NAME (COMMAND ARGS)"
// or "mcp server NAME (URL)".
func (s *Server) Source() string { return s.source }

// Start starts the server, completes the MCP handshake and lists its tools,
// within opts.StartTimeout.
func Start(ctx context.Context, cfg spec.MCPServer, opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if cfg.StartupTimeout > 0 {
		opts.StartTimeout = cfg.StartupTimeout
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{cfg: cfg, opts: opts, logger: opts.Logger.Named("mcp." + cfg.Name), source: source(cfg), timeout: cfg.Timeout}
	if s.timeout <= 0 {
		s.timeout = DefaultCallTimeout
	}
	s.maxCall = opts.CallMaximum
	if s.maxCall <= 0 {
		s.maxCall = MaxCallFactor * s.timeout
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
			c.Close()
			if sctx.Err() != nil && ctx.Err() == nil {
				return nil, fmt.Errorf("MCP server %s: tools/list got no answer within %s%s", cfg.Name, opts.StartTimeout, c.stderrSuffix())
			}
			return nil, fmt.Errorf("MCP server %s: tools/list: %v%s", cfg.Name, err, c.stderrSuffix())
		}
		listed = append(listed, t)
	}
	s.sup = supervise.New(supervise.Config[*conn]{
		Name: "MCP server " + cfg.Name, Start: s.restart, Backoff: opts.RestartBackoff,
		Grace: opts.CancelGrace, Logger: s.logger,
	}, c)
	s.setTools(listed, false)
	s.relistMu.Lock()
	s.started = true
	if s.relistPending {
		// The tools changed again during the start.
		s.relistRunning = true
		go s.relistLoop()
	}
	s.relistMu.Unlock()
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

// Close stops the server for good.
func (s *Server) Close() {
	s.closed.Store(true)
	s.sup.Close()
}
