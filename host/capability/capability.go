// Package capability is the host side of the capabilities kosong-host
// offers a plugin (Approval, Environment, Session, Config, Progress,
// UserInput, Model): Host implements pluginrpc.HostServer for one plugin,
// which the plugin's pluginrpc.Client serves on one gRPC server, however
// the plugin is reached.
package capability

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// Offered lists the capabilities this host serves to every plugin; see
// Host.Offered for those it serves only where they make sense.
var Offered = []string{pluginrpc.CapApproval, pluginrpc.CapEnvironment, pluginrpc.CapSession, pluginrpc.CapConfig, pluginrpc.CapProgress}

// Environment is what the Environment capability reports.
type Environment struct {
	OS        string
	ShellName string
	ShellPath string
	WorkDir   string
}

// Session is what the Session capability reports to one plugin.
type Session struct {
	ID       string
	WorkDir  string
	StateDir string
}

// CallTracker says whether a tool call is in progress; approvals are only
// answered for calls in progress.
type CallTracker interface {
	Active(toolCallID string) bool
}

// Host is the host side of every capability, for one plugin. Its methods
// refuse with gRPC status codes the plugin sees: FailedPrecondition for a
// request outside a call in progress, Unimplemented for a capability not
// served here, Aborted when the user could not be asked.
type Host struct {
	Plugin  string
	Decider approval.Decider
	Env     Environment
	Session Session
	// Configs holds each tool's config block as JSON.
	Configs map[string]json.RawMessage
	Calls   CallTracker
	Now     func() time.Time
	// Progress routes progress reports to their calls; nil refuses them.
	Progress *ProgressSinks
	// Questions answers AskUserQuestion; nil (no one can answer) offers
	// no UserInput.
	Questions UserInput
	// Model are the session's model facts; nil offers no Model.
	Model *Model
}

var _ pluginrpc.HostServer = (*Host)(nil)

// RequestApproval asks the Decider about an action of a call in progress.
func (h *Host) RequestApproval(ctx context.Context, req pluginrpc.ApprovalRequest) (pluginrpc.Decision, error) {
	if h.Decider == nil {
		return pluginrpc.Decision{}, status.Error(codes.Unimplemented, "the host offers no approval decider")
	}
	if req.ToolCallID == "" || (h.Calls != nil && !h.Calls.Active(req.ToolCallID)) {
		return pluginrpc.Decision{}, status.Errorf(codes.FailedPrecondition,
			"approval requested by plugin %s with no tool call in progress (tool call id %q)", h.Plugin, req.ToolCallID)
	}
	r := approval.Request{
		ToolCallID: req.ToolCallID, ToolName: req.ToolName,
		Action: req.Action, Description: req.Description,
	}
	for _, d := range req.Display {
		r.Display = append(r.Display, approval.Display{Kind: d.Kind, Data: d.Data})
	}
	d, err := h.Decider.Decide(ctx, r)
	if err != nil {
		return pluginrpc.Decision{}, status.Errorf(codes.Aborted, "approval: %v", err)
	}
	return pluginrpc.Decision{Approved: d.Approved, Feedback: d.Feedback}, nil
}

// GetEnvironment reports Env, with the host's clock.
func (h *Host) GetEnvironment(context.Context) (pluginrpc.Environment, error) {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	e := h.Env
	return pluginrpc.Environment{OS: e.OS, ShellName: e.ShellName, ShellPath: e.ShellPath, WorkDir: e.WorkDir, Now: now()}, nil
}

// GetSession reports Session.
func (h *Host) GetSession(context.Context) (pluginrpc.Session, error) {
	return pluginrpc.Session{ID: h.Session.ID, WorkDir: h.Session.WorkDir, StateDir: h.Session.StateDir}, nil
}

// GetConfig returns the tool's block of Configs, nil when it has none.
func (h *Host) GetConfig(_ context.Context, tool string) (json.RawMessage, error) {
	raw, ok := h.Configs[tool]
	if !ok {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, status.Error(codes.Internal, fmt.Sprintf("config of %s is not valid JSON", tool))
	}
	return raw, nil
}
