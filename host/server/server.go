// Package server is the host of `kosong-host serve`: many sessions in one
// process behind an HTTP API (/v1, docs/server.md, the OpenAPI document
// openapi.json). Each session is a conversation (host/conversation) opened
// through the Opener the command gives; its events (the stream-json events
// and the server's own) go to a bounded log read as Server-Sent Events;
// approvals and questions wait for the first client that answers. The API
// types and a Go client are in host/serverclient.
package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/serverclient"
)

// Defaults of Config.
const (
	DefaultMaxSessions = 64
	DefaultMaxBody     = 8 << 20
)

// OpenRequest is what the server asks of the Opener for one session.
type OpenRequest struct {
	// WorkDir is the session's folder (absolute, existing).
	WorkDir string
	// Agent is the agent file the client named ("" find it by WorkDir).
	Agent string
	// Model is the model the client named ("" the command's).
	Model string
	// Mode is ask, yolo or plan ("" the command's default).
	Mode string
	// Resume is the session id to continue ("" a new session).
	Resume string
	// Ask, Questions and Observer are the session's: the Opener puts them
	// in the conversation.Config.
	Ask       approval.Asker
	Questions approval.UserInput
	Observer  loop.Observer
}

// Opened is an opened session.
type Opened struct {
	Conv *conversation.Conversation
	// AgentFile is the spec file in use ("built-in default" for it).
	AgentFile string
	// Note says in one line what the workspace trust rules left out.
	Note string
}

// Opener opens a session's conversation with conversation.Open, its
// Config built as run builds it, with the request's Ask, Questions and
// Observer and DeferStart set (the server calls Start). An error is the
// client's (shown to it in one line).
type Opener func(ctx context.Context, req OpenRequest) (*Opened, error)

// Config configures a Server.
type Config struct {
	Open Opener
	// Remote, if set, runs the new sessions on that engine instead of
	// opening them through Open (which may then be nil).
	Remote Remote
	// Token is the bearer token every request but /healthz must send.
	Token string
	// StateDir holds the server's session list (serverclient.Dir).
	StateDir string
	// MaxSessions bounds the open sessions; MaxBody a request body.
	MaxSessions int
	MaxBody     int64
	// LogEvents bounds each session's event log.
	LogEvents int
	// CheckHost: the Host header must name a loopback host (the server
	// listens on loopback or a unix socket: DNS rebinding protection).
	CheckHost bool
	// DefaultMode is the mode of sessions created without one.
	DefaultMode string
	// Page, if set, serves GET / and the paths outside /v1 and /healthz
	// without a token (the web page's static files).
	Page    http.Handler
	Version string
	Logger  hclog.Logger
	// KeepAlive is the interval of SSE keep-alive comments (default 15s).
	KeepAlive time.Duration
}

// Server hosts the sessions.
type Server struct {
	cfg    Config
	logger hclog.Logger
	reg    *registry
	ctx    context.Context
	stop   context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*session
	deleted  map[string]bool
	opening  int
	draining bool
}

// New returns a server; the sessions its state folder lists (saved by an
// earlier server) are listed, saved, and open again at their next message.
func New(cfg Config) (*Server, error) {
	if cfg.Open == nil && cfg.Remote == nil {
		return nil, errors.New("server: no Opener")
	}
	if cfg.Token == "" {
		return nil, errors.New("server: no token")
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.DefaultMode == "" {
		cfg.DefaultMode = serverclient.ModeAsk
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	reg, err := loadRegistry(filepath.Join(cfg.StateDir, RegistryFile))
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{cfg: cfg, logger: cfg.Logger, reg: reg, sessions: map[string]*session{}, deleted: map[string]bool{}}
	s.ctx, s.stop = context.WithCancel(context.Background())
	var remote []*session
	for _, rec := range reg.list() {
		ss := newSession(s, rec)
		if rec.Engine != "" && cfg.Remote != nil && rec.Engine == cfg.Remote.Name() {
			// It runs on the engine still: attach to it again.
			ss.remote = cfg.Remote.Attach(rec.ID)
			remote = append(remote, ss)
		}
		s.sessions[rec.ID] = ss
	}
	for _, ss := range remote {
		ss.attached()
	}
	return s, nil
}

// saveRecord writes a session's record to the session list.
func (s *Server) saveRecord(rec record) {
	if err := s.reg.put(rec); err != nil {
		s.logger.Error("server: the session list was not saved", "error", err)
	}
}

// Shutdown stops taking turns and sessions, cancels the running turns
// (their completed steps are saved, as an interrupt saves them; they are
// marked interrupted), closes every session and saves the session list.
// The HTTP server's own shutdown follows it.
func (s *Server) Shutdown() {
	s.mu.Lock()
	s.draining = true
	list := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		list = append(list, ss)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			open := ss.isOpen()
			rec := ss.close(closedShutdown, true)
			if open {
				s.saveRecord(rec)
			}
		}()
	}
	wg.Wait()
	s.stop()
}

func (ss *session) isOpen() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.conv != nil || ss.remote != nil
}

// openCount counts the open sessions and those opening (a remote
// session holds no process here: it does not count).
func (s *Server) openCountLocked() int {
	n := s.opening
	for _, ss := range s.sessions {
		ss.mu.Lock()
		open := ss.conv != nil
		ss.mu.Unlock()
		if open {
			n++
		}
	}
	return n
}
