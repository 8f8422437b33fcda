package capability

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk/limits"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// ProgressReport is a progress report of a running plugin tool call, as the
// wire glue decodes it.
type ProgressReport = pluginrpc.ProgressReport

// ProgressSinks routes the progress reports of a plugin's tool calls to the
// sink the host's plugin tool registered for each call, at most one every
// limits.ProgressInterval a call: a report that comes sooner is held,
// replacing any report held before it, and passed on when the interval
// ends or when the call's sink is unregistered, so the last report of a
// call always arrives, and before the call's result.
type ProgressSinks struct {
	mu    sync.Mutex
	sinks map[string]*progressSink
	// interval overrides limits.ProgressInterval (tests); 0 keeps it.
	interval time.Duration
}

type progressSink struct {
	alive    func()
	fn       func(ProgressReport)
	interval time.Duration
	// send serialises the calls of fn, so reports arrive in order and none
	// after unregister returns.
	send sync.Mutex

	mu     sync.Mutex
	last   time.Time       // when fn was last called
	held   *ProgressReport // the report waiting for the interval to end
	timer  *time.Timer     // ends the wait for held
	closed bool
}

// Register routes the reports of toolCallID to fn until unregister is
// called, which first passes on a report still held; alive (nil: none) runs
// at once on every report, held or not. fn runs on the capability server's
// goroutine or a timer's, one report at a time; both must return quickly.
func (p *ProgressSinks) Register(toolCallID string, alive func(), fn func(ProgressReport)) (unregister func()) {
	interval := p.interval
	if interval <= 0 {
		interval = limits.ProgressInterval
	}
	s := &progressSink{alive: alive, fn: fn, interval: interval}
	p.mu.Lock()
	if p.sinks == nil {
		p.sinks = map[string]*progressSink{}
	}
	p.sinks[toolCallID] = s
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		if p.sinks[toolCallID] == s {
			delete(p.sinks, toolCallID)
		}
		p.mu.Unlock()
		s.close()
	}
}

func (p *ProgressSinks) deliver(r ProgressReport) bool {
	p.mu.Lock()
	s := p.sinks[r.ToolCallID]
	p.mu.Unlock()
	if s == nil {
		return false
	}
	s.report(r)
	return true
}

// report passes r on at once when the interval since the last report has
// ended and none is held; else it holds r until then.
func (s *progressSink) report(r ProgressReport) {
	if s.alive != nil {
		s.alive()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	now := time.Now()
	if s.held == nil && now.Sub(s.last) >= s.interval {
		s.last = now
		s.mu.Unlock()
		s.send.Lock()
		defer s.send.Unlock()
		s.fn(r)
		return
	}
	s.held = &r
	if s.timer == nil {
		s.timer = time.AfterFunc(s.interval-now.Sub(s.last), s.flush)
	}
	s.mu.Unlock()
}

// flush passes on the held report, if any.
func (s *progressSink) flush() {
	s.send.Lock()
	defer s.send.Unlock()
	s.mu.Lock()
	r := s.held
	s.held, s.timer = nil, nil
	if r == nil || s.closed {
		s.mu.Unlock()
		return
	}
	s.last = time.Now()
	s.mu.Unlock()
	s.fn(*r)
}

// close passes on the held report and stops the sink: reports after close
// are dropped, and none is passed on once close returns.
func (s *progressSink) close() {
	s.send.Lock()
	defer s.send.Unlock()
	s.mu.Lock()
	r := s.held
	s.held, s.closed = nil, true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
	if r != nil {
		s.fn(*r)
	}
}

// ReportProgress hands a report to the sink registered for its call.
func (h *Host) ReportProgress(_ context.Context, r pluginrpc.ProgressReport) error {
	if h.Progress == nil {
		return status.Error(codes.Unimplemented, "the host takes no progress reports")
	}
	tool, err := h.callTool("progress reported", r.ToolCallID)
	if err != nil {
		return err
	}
	if err := h.declared(pluginrpc.CapProgress, tool); err != nil {
		return err
	}
	r.ToolName = tool
	r.Message, _ = limits.Cut(r.Message, limits.ProgressMessageChars)
	if !h.Progress.deliver(r) {
		return status.Errorf(codes.FailedPrecondition,
			"progress reported by plugin %s with no tool call in progress (tool call id %q)", h.Plugin, r.ToolCallID)
	}
	return nil
}
