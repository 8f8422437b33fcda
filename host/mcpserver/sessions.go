package mcpserver

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The defaults of the HTTP server's session limits.
const (
	// DefaultSessionTimeout is how long a session may go without a request
	// before it is closed.
	DefaultSessionTimeout = 10 * time.Minute
	// DefaultMaxSessions is how many sessions may be open at once.
	DefaultMaxSessions = 100
)

// sessionHeader carries the session id of streamable HTTP.
const sessionHeader = "Mcp-Session-Id"

// sessionLimit admits new sessions up to max: at the limit, the least
// recently used session with no request in flight is closed to make room
// (its client gets 404 on its next request, and may initialize again); when
// every session has a request in flight, the new one is refused with 503.
// Idle sessions are also closed after the go-sdk's SessionTimeout.
type sessionLimit struct {
	server *mcp.Server
	max    int
	next   http.Handler

	mu      sync.Mutex
	pending int                    // new sessions being initialized
	seen    map[string]*sessionUse // admitted sessions, by id
}

type sessionUse struct {
	last     time.Time
	inflight int
}

func newSessionLimit(server *mcp.Server, maxSessions int, next http.Handler) *sessionLimit {
	return &sessionLimit{server: server, max: maxSessions, next: next, seen: map[string]*sessionUse{}}
}

func (l *sessionLimit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id := r.Header.Get(sessionHeader); id != "" {
		l.begin(id)
		defer l.end(id)
		l.next.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		l.next.ServeHTTP(w, r)
		return
	}
	if err := l.admit(); err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	nw := &newSession{ResponseWriter: w, l: l}
	l.next.ServeHTTP(nw, r)
	nw.admitted()
}

// newSession is the answer to a request that starts a session: the session
// is admitted as its header is written, before the client can send another
// request. Its own initialize request does not count as in flight.
type newSession struct {
	http.ResponseWriter
	l    *sessionLimit
	once sync.Once
}

func (n *newSession) admitted() {
	n.once.Do(func() {
		n.l.mu.Lock()
		defer n.l.mu.Unlock()
		n.l.pending--
		if id := n.Header().Get(sessionHeader); id != "" {
			n.l.seen[id] = &sessionUse{last: time.Now()}
		}
	})
}

func (n *newSession) WriteHeader(code int) {
	n.admitted()
	n.ResponseWriter.WriteHeader(code)
}

func (n *newSession) Write(b []byte) (int, error) {
	n.admitted()
	return n.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer (to
// flush a stream).
func (n *newSession) Unwrap() http.ResponseWriter { return n.ResponseWriter }

// admit makes room for a new session, closing the least recently used idle
// one at the limit.
func (l *sessionLimit) admit() error {
	live := map[string]*mcp.ServerSession{}
	for ss := range l.server.Sessions() {
		live[ss.ID()] = ss
	}
	l.mu.Lock()
	for id := range l.seen {
		if live[id] == nil { // closed: idle timeout, DELETE, failed initialization
			delete(l.seen, id)
		}
	}
	var victim *mcp.ServerSession
	if len(l.seen)+l.pending >= l.max {
		var oldest string
		for id, u := range l.seen {
			if u.inflight == 0 && (oldest == "" || u.last.Before(l.seen[oldest].last)) {
				oldest = id
			}
		}
		if oldest == "" {
			l.mu.Unlock()
			return fmt.Errorf("too many MCP sessions: all %d are in use (--max-sessions)", l.max)
		}
		delete(l.seen, oldest)
		victim = live[oldest]
	}
	l.pending++
	l.mu.Unlock()
	if victim != nil {
		_ = victim.Close()
	}
	return nil
}

func (l *sessionLimit) begin(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.seen[id]; u != nil {
		u.inflight++
		u.last = time.Now()
	}
}

func (l *sessionLimit) end(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.seen[id]; u != nil {
		u.inflight--
		u.last = time.Now()
	}
}
