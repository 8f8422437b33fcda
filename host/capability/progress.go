package capability

import (
	"context"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// ProgressReport is a progress report of a running plugin tool call, as the
// wire glue decodes it.
type ProgressReport = pluginrpc.ProgressReport

// ProgressSinks routes the progress reports of a plugin's tool calls to the
// sink the host's plugin tool registered for each call.
type ProgressSinks struct {
	mu    sync.Mutex
	sinks map[string]*progressSink
}

type progressSink struct{ fn func(ProgressReport) }

// Register routes the reports of toolCallID to fn until unregister is
// called. fn runs on the capability server's goroutine: it must return
// quickly.
func (p *ProgressSinks) Register(toolCallID string, fn func(ProgressReport)) (unregister func()) {
	s := &progressSink{fn: fn}
	p.mu.Lock()
	if p.sinks == nil {
		p.sinks = map[string]*progressSink{}
	}
	p.sinks[toolCallID] = s
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.sinks[toolCallID] == s {
			delete(p.sinks, toolCallID)
		}
	}
}

func (p *ProgressSinks) deliver(r ProgressReport) bool {
	p.mu.Lock()
	s := p.sinks[r.ToolCallID]
	p.mu.Unlock()
	if s == nil {
		return false
	}
	s.fn(r)
	return true
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
	if !h.Progress.deliver(r) {
		return status.Errorf(codes.FailedPrecondition,
			"progress reported by plugin %s with no tool call in progress (tool call id %q)", h.Plugin, r.ToolCallID)
	}
	return nil
}
