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
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/pluginsdk/limits"
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

// CallTracker knows the calls in progress on one plugin: ToolOf reports the
// tool the host called with toolCallID, while that call runs on this plugin.
// Approvals and questions are answered only for those calls, and are shown
// with that tool's name, whatever tool the plugin claims.
type CallTracker interface {
	ToolOf(toolCallID string) (tool string, ok bool)
}

// Host is the host side of every capability, for one plugin. Its methods
// refuse with gRPC status codes the plugin sees: FailedPrecondition for a
// request outside a call in progress of this plugin or for a capability its
// tools did not declare, Unimplemented for a capability not served here,
// Aborted when the user could not be asked.
type Host struct {
	Plugin  string
	Decider approval.Decider
	Env     Environment
	Session Session
	// Configs holds each tool's config block as JSON.
	Configs map[string]json.RawMessage
	// Calls are the plugin's own calls in progress; nil: none.
	Calls CallTracker
	// Declared are the capabilities each tool of the plugin declared (its
	// Describe), by tool name: a capability no tool declared is refused,
	// and one acting for a call (Approval, Progress, UserInput) must be
	// declared by that call's tool.
	Declared map[string][]string
	Now      func() time.Time
	// Progress routes progress reports to their calls; nil refuses them.
	Progress *ProgressSinks
	// Questions answers AskUserQuestion; nil (no one can answer) offers
	// no UserInput.
	Questions approval.UserInput
	// Model are the session's model facts; nil offers no Model.
	Model *Model
	// Editor is the editor's files; nil offers no Editor.
	Editor Editor
	// EditorBounds hold a sandboxed plugin's Editor requests to its
	// sandbox's folders; nil: the plugin is not sandboxed.
	EditorBounds *Bounds
	// Terminal is the editor's terminal; nil offers no Terminal.
	Terminal Terminal
}

var _ pluginrpc.HostServer = (*Host)(nil)

// RequestApproval asks the Decider about an action of a call in progress.
func (h *Host) RequestApproval(ctx context.Context, req pluginrpc.ApprovalRequest) (pluginrpc.Decision, error) {
	if h.Decider == nil {
		return pluginrpc.Decision{}, status.Error(codes.Unimplemented, "the host offers no approval decider")
	}
	tool, err := h.callTool("approval requested", req.ToolCallID)
	if err != nil {
		return pluginrpc.Decision{}, err
	}
	if err := h.declared(pluginrpc.CapApproval, tool); err != nil {
		return pluginrpc.Decision{}, err
	}
	// The host names the plugin and the tool: a ToolName the plugin claims
	// is ignored.
	r := approval.Request{
		ToolCallID: req.ToolCallID, Plugin: h.Plugin, ToolName: tool,
		Action: req.Action, Description: req.Description,
	}
	for _, d := range req.Display {
		r.Display = append(r.Display, approval.Display{Kind: d.Kind, Data: d.Data})
	}
	r = boundApproval(r)
	d, err := h.Decider.Decide(ctx, r)
	if err != nil {
		return pluginrpc.Decision{}, status.Errorf(codes.Aborted, "approval: %v", err)
	}
	return pluginrpc.Decision{Approved: d.Approved, Feedback: d.Feedback}, nil
}

// callTool is the tool of id, a call in progress on this plugin; what says
// what was asked, for the error.
func (h *Host) callTool(what, id string) (string, error) {
	if id != "" && h.Calls != nil {
		if tool, ok := h.Calls.ToolOf(id); ok {
			return tool, nil
		}
	}
	return "", status.Errorf(codes.FailedPrecondition,
		"%s by plugin %s with no tool call of its own in progress (tool call id %q)", what, h.Plugin, id)
}

// declared refuses a capability that tool did not declare, or, with tool
// "", that no tool of the plugin declared.
func (h *Host) declared(capability, tool string) error {
	if tool != "" {
		if slices.Contains(h.Declared[tool], capability) {
			return nil
		}
		return status.Errorf(codes.FailedPrecondition,
			"tool %s of plugin %s did not declare the %s capability", tool, h.Plugin, capability)
	}
	for _, caps := range h.Declared {
		if slices.Contains(caps, capability) {
			return nil
		}
	}
	return status.Errorf(codes.FailedPrecondition, "plugin %s did not declare the %s capability", h.Plugin, capability)
}

// GetEnvironment reports Env, with the host's clock.
func (h *Host) GetEnvironment(context.Context) (pluginrpc.Environment, error) {
	if err := h.declared(pluginrpc.CapEnvironment, ""); err != nil {
		return pluginrpc.Environment{}, err
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	e := h.Env
	return pluginrpc.Environment{OS: e.OS, ShellName: e.ShellName, ShellPath: e.ShellPath, WorkDir: e.WorkDir, Now: now()}, nil
}

// GetSession reports Session.
func (h *Host) GetSession(context.Context) (pluginrpc.Session, error) {
	if err := h.declared(pluginrpc.CapSession, ""); err != nil {
		return pluginrpc.Session{}, err
	}
	return pluginrpc.Session{ID: h.Session.ID, WorkDir: h.Session.WorkDir, StateDir: h.Session.StateDir}, nil
}

// GetConfig returns the tool's block of Configs, nil when it has none; the
// tool must have declared Config.
func (h *Host) GetConfig(_ context.Context, tool string) (json.RawMessage, error) {
	if err := h.declared(pluginrpc.CapConfig, tool); err != nil {
		return nil, err
	}
	raw, ok := h.Configs[tool]
	if !ok {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, status.Error(codes.Internal, fmt.Sprintf("config of %s is not valid JSON", tool))
	}
	return raw, nil
}

// boundApproval applies limits.ApprovalBytes to an approval request: over
// it, the description is cut to limits.ResultChars characters and the
// display blocks that do not fit what is left are replaced by one brief
// block saying so, so that the user knows what is not shown.
func boundApproval(r approval.Request) approval.Request {
	size := len(r.Description)
	for _, d := range r.Display {
		size += len(d.Kind) + len(d.Data)
	}
	if size <= limits.ApprovalBytes {
		return r
	}
	r.Description, _ = limits.Cut(r.Description, limits.ResultChars)
	budget := limits.ApprovalBytes - len(r.Description)
	var kept []approval.Display
	left := 0
	for _, d := range r.Display {
		if n := len(d.Kind) + len(d.Data); n <= budget && left == 0 {
			kept = append(kept, d)
			budget -= n
			continue
		}
		left += len(d.Kind) + len(d.Data)
	}
	if left > 0 {
		note, _ := json.Marshal(fmt.Sprintf("[%s of details left out: plugin %s asked with more than the %s an approval request may show]",
			limits.Size(left), r.Plugin, limits.Size(limits.ApprovalBytes)))
		kept = append(kept, approval.Display{Kind: "brief", Data: note})
	}
	r.Display = kept
	return r
}
