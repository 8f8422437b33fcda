package serverclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxEventBytes bounds one event's data line (stream-json lines are at
// most 1 MiB; the rest is room for the server's own events).
const MaxEventBytes = 2 << 20

// Stream reads a session's events, reconnecting with Last-Event-ID when
// the connection drops: Next returns each event once, in order, as long as
// the server still holds it (else an events_lost event says what was
// missed).
type Stream struct {
	c    *Client
	id   string
	ctx  context.Context
	last int64
	r    *bufio.Reader // the open connection's; only Next uses it

	mu     sync.Mutex // guards body and closed: Close may come from another goroutine
	body   io.ReadCloser
	closed bool
	// Retry is the wait before a reconnection (default 500ms, or the
	// server's retry: field).
	Retry time.Duration
	// Reconnects counts the reconnections so far.
	Reconnects int
}

// Events opens the event stream of session id after sequence number
// after (0: from the first event the server holds).
func (c *Client) Events(ctx context.Context, id string, after int64) (*Stream, error) {
	s := &Stream{c: c, id: id, ctx: ctx, last: after, Retry: 500 * time.Millisecond}
	if err := s.connect(); err != nil {
		return nil, err
	}
	return s, nil
}

// Last is the sequence number of the last event read.
func (s *Stream) Last() int64 { return s.last }

// ErrClosed is what Next returns once the stream is closed.
var ErrClosed = errors.New("server: the event stream is closed")

// Close ends the stream; a Next blocked in another goroutine returns
// ErrClosed.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.body != nil {
		return s.body.Close()
	}
	return nil
}

// drop closes the open connection; it reports whether the stream is
// closed.
func (s *Stream) drop() (closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.body != nil {
		s.body.Close()
	}
	s.body, s.r = nil, nil
	return s.closed
}

func (s *Stream) connect() error {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodGet, s.c.base+sessionPath(s.id, "events"), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", strconv.FormatInt(s.last, 10))
	s.c.authorize(req)
	resp, err := s.c.http.Do(req)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return readError(resp)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		resp.Body.Close()
		return ErrClosed
	}
	s.body = resp.Body
	s.r = bufio.NewReaderSize(resp.Body, 64<<10)
	return nil
}

// Next returns the next event. A dropped connection is reopened (from
// the last event read) until ctx ends; an error answer of the server (the
// session is gone, the token is refused) ends the stream with an *Error.
func (s *Stream) Next() (Event, error) {
	for {
		if s.r != nil {
			ev, err := s.read()
			if err == nil {
				return ev, nil
			}
			if s.drop() {
				return Event{}, ErrClosed
			}
		}
		if err := s.ctx.Err(); err != nil {
			return Event{}, err
		}
		select {
		case <-time.After(s.Retry):
		case <-s.ctx.Done():
			return Event{}, s.ctx.Err()
		}
		s.Reconnects++
		if err := s.connect(); err != nil {
			var apiErr *Error
			if errors.As(err, &apiErr) || errors.Is(err, ErrClosed) || s.ctx.Err() != nil {
				return Event{}, err
			}
			// The server may be restarting: try again.
		}
	}
}

// read reads one event (comments and keep-alives skipped).
func (s *Stream) read() (Event, error) {
	var ev Event
	var data strings.Builder
	hasID := false
	for {
		line, err := s.readLine()
		if err != nil {
			return Event{}, err
		}
		if line == "" {
			if data.Len() == 0 {
				continue
			}
			ev.Data = json.RawMessage(data.String())
			var t struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(ev.Data, &t) != nil {
				return Event{}, fmt.Errorf("server: an event that is not JSON: %.80s", data.String())
			}
			ev.Type = t.Type
			if hasID {
				s.last = ev.Seq
			}
			return ev, nil
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			n, err := strconv.ParseInt(value, 10, 64)
			if err == nil {
				ev.Seq, hasID = n, true
			}
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		case "retry":
			if ms, err := strconv.Atoi(value); err == nil && ms > 0 {
				s.Retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

func (s *Stream) readLine() (string, error) {
	var b []byte
	for {
		chunk, isPrefix, err := s.r.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, chunk...)
		if len(b) > MaxEventBytes {
			return "", errors.New("server: an event line is over the limit")
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}
