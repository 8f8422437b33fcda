package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The go-sdk reads a server's messages in order, but hands notifications
// to their handlers on a goroutine of their own, while a call's result
// goes to the caller at once: the last progress notification of a call, or
// a list_changed sent during it, would often be handled after the call
// returned. So the client also watches the wire: it counts the progress
// notifications of each call and the list_changed notifications as they
// are read, and a call returns only once the handlers caught up with what
// was read before its result (within barrierWait).

// streamSettle is how long a call to a streamable HTTP server that offers
// list_changed waits after its result for a list_changed already on its
// way: over HTTP the notification travels on the event stream, apart from
// the result, and may be read just after it.
const streamSettle = 50 * time.Millisecond

// barrierWait bounds how long a call's result waits for the progress and
// list_changed notifications read before it to be handled.
const barrierWait = 5 * time.Second

// counter is a number that goroutines can wait on.
type counter struct {
	mu sync.Mutex
	n  int64
	ch chan struct{} // closed and replaced when n changes
}

func (c *counter) add(d int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += d
	c.wakeLocked()
}

// raise sets n to v if v is larger.
func (c *counter) raise(v int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v > c.n {
		c.n = v
		c.wakeLocked()
	}
}

func (c *counter) wakeLocked() {
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

func (c *counter) get() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wait waits until n >= want, ctx ends or bound passes; it reports
// whether n got there.
func (c *counter) wait(ctx context.Context, want int64, bound time.Duration) bool {
	t := time.NewTimer(bound)
	defer t.Stop()
	for {
		c.mu.Lock()
		if c.n >= want {
			c.mu.Unlock()
			return true
		}
		if c.ch == nil {
			c.ch = make(chan struct{})
		}
		ch := c.ch
		c.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// sawNotification records a notification as it is read off the wire.
func (s *Server) sawNotification(method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		var p struct {
			Token any `json:"progressToken"`
		}
		if json.Unmarshal(params, &p) != nil || p.Token == nil {
			return
		}
		if v, ok := s.calls.Load(fmt.Sprint(p.Token)); ok {
			v.(*callState).seen.Add(1)
		}
	case "notifications/tools/list_changed":
		s.changesSeen.add(1)
		s.requestRelist()
	}
}

// httpTap is the round tripper of streamable HTTP servers: every response
// body is bounded by MaxMessageBytes (a JSON body as a whole, an event
// stream event by event) and its notifications are seen as they are read;
// the standalone event stream (GET) that answers no headers within the
// start timeout counts as not offered.
type httpTap struct {
	base  http.RoundTripper
	srv   *Server
	c     *conn
	start context.Context // the connection's start
	// legacy is an HTTP+SSE server: its messages are seen by spyConn,
	// and its one event stream is bounded by its own start; the tap only
	// bounds and logs sizes.
	legacy bool
}

// headerWait bounds the wait for the event stream's headers: half the
// rest of the start (the tools are still to be listed), or half a start
// timeout once the server is up.
func (t httpTap) headerWait() time.Duration {
	bound := t.srv.opts.StartTimeout
	if dl, ok := t.start.Deadline(); ok && t.start.Err() == nil {
		if left := time.Until(dl); left > 0 && left < bound {
			bound = left
		}
	}
	return bound / 2
}

func (t httpTap) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || t.legacy {
		return t.wrap(t.base.RoundTrip(r))
	}
	ctx, cancel := context.WithCancel(r.Context())
	wait := t.headerWait()
	timer := time.AfterFunc(wait, cancel)
	resp, err := t.base.RoundTrip(r.WithContext(ctx))
	if !timer.Stop() {
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		t.srv.logger.Warn("MCP server did not open its event stream in time; going on without it", "server", t.srv.cfg.Name, "timeout", wait)
		return &http.Response{StatusCode: http.StatusMethodNotAllowed, Status: "405 Method Not Allowed",
			Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}
	if err != nil {
		cancel()
		return nil, err
	}
	body := &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.c.eventStream.Store(true)
		body.closed = func() { t.c.eventStream.Store(false) }
	}
	resp.Body = body
	return t.wrap(resp, nil)
}

func (t httpTap) wrap(resp *http.Response, err error) (*http.Response, error) {
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &sseTap{ReadCloser: resp.Body, srv: t.srv, count: !t.legacy}
	} else {
		resp.Body = &capBody{ReadCloser: resp.Body, srv: t.srv, left: MaxMessageBytes}
	}
	return resp, nil
}

// cancelBody ends its request's context when closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
	closed func() // if set, called on Close
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	if b.closed != nil {
		b.closed()
	}
	return err
}

// capBody fails a body over MaxMessageBytes.
type capBody struct {
	io.ReadCloser
	srv    *Server
	left   int64
	logged bool
}

func (b *capBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		err := fmt.Errorf("MCP server %s sent a message over the limit of %d bytes (mcpclient.MaxMessageBytes)", b.srv.cfg.Name, MaxMessageBytes)
		if !b.logged {
			b.logged = true
			b.srv.logger.Warn(err.Error()+"; it was refused", "server", b.srv.cfg.Name)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// sseTap watches an event stream as the go-sdk reads it: the
// notifications in its data lines (one-line events of up to maxTapLine
// bytes; the go-sdk and the TypeScript SDK write each message as one), and
// the size of each event (the go-sdk refuses one over MaxMessageBytes, and
// the session ends; the tap logs it, naming the server).
type sseTap struct {
	io.ReadCloser
	srv    *Server
	count  bool // hand the notifications to srv
	line   []byte
	long   bool  // the line is over maxTapLine: not inspected
	event  int64 // bytes of the event so far
	logged bool
}

const maxTapLine = 64 << 10

func (t *sseTap) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.scan(p[:n])
	return n, err
}

func (t *sseTap) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		t.event += int64(len(part))
		if !t.long {
			if len(t.line)+len(part) > maxTapLine {
				t.long, t.line = true, t.line[:0]
			} else {
				t.line = append(t.line, part...)
			}
		}
		if t.event > MaxMessageBytes && !t.logged {
			t.logged = true
			t.srv.logger.Warn(fmt.Sprintf("MCP server %s sent a message over the limit of %d bytes (mcpclient.MaxMessageBytes); it was refused and the session ends", t.srv.cfg.Name, MaxMessageBytes), "server", t.srv.cfg.Name)
		}
		if i < 0 {
			return
		}
		t.endLine()
		b = b[i+1:]
	}
}

func (t *sseTap) endLine() {
	line := bytes.TrimSuffix(t.line, []byte("\r"))
	long := t.long
	t.line, t.long = t.line[:0], false
	if len(line) == 0 && !long {
		t.event = 0 // the end of an event
		return
	}
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if long || !ok || !t.count || !bytes.Contains(data, []byte("notifications/")) {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(bytes.TrimSpace(data), &msg) == nil && msg.ID == nil {
		t.srv.sawNotification(msg.Method, msg.Params)
	}
}
