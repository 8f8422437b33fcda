// Package fakeapi holds what the in-repo fake provider servers share: the
// queue of scripted responses and the record of the requests received.
package fakeapi

import (
	"sync"
	"testing"
)

// Script is a queue of scripted responses and a record of requests; it is
// safe for concurrent use.
type Script[Resp, Req any] struct {
	mu       sync.Mutex
	queue    []Resp
	requests []Req
}

// NewScript returns a script that answers with responses, in order.
func NewScript[Resp, Req any](responses []Resp) *Script[Resp, Req] {
	return &Script[Resp, Req]{queue: append([]Resp(nil), responses...)}
}

// Enqueue adds responses to the end of the queue.
func (s *Script[Resp, Req]) Enqueue(responses ...Resp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, responses...)
}

// Pending is the number of responses not yet served.
func (s *Script[Resp, Req]) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns every request received so far, in order.
func (s *Script[Resp, Req]) Requests() []Req {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Req(nil), s.requests...)
}

// Next records a request and takes the next response; n counts the
// requests so far, and ok is false when the queue is empty.
func (s *Script[Resp, Req]) Next(rec Req) (resp Resp, n int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	if len(s.queue) > 0 {
		resp, s.queue, ok = s.queue[0], s.queue[1:], true
	}
	return resp, len(s.requests), ok
}

// LastRequest returns the last request received; it fails the test if
// there was none.
func (s *Script[Resp, Req]) LastRequest(t testing.TB) Req {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("fake provider server: no request received")
	}
	return reqs[len(reqs)-1]
}
