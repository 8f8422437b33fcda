// Package capability serves the host capabilities (Approval, Environment,
// Session, Config, Progress, UserInput, Model) to one plugin, all on one gRPC server brokered over the
// plugin's go-plugin connection.
package capability

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
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

// Host is the host side of every capability, for one plugin.
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

// Serve starts the capability server on the broker and returns its id, to
// be sent once, in the Load request.
func (h *Host) Serve(broker *plugin.GRPCBroker) uint32 {
	id := broker.NextId()
	go broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(opts...)
		h.Register(s)
		return s
	})
	return id
}

type approvalServer struct {
	pluginv1.UnimplementedApprovalServer
	h *Host
}

func (s approvalServer) Request(ctx context.Context, req *pluginv1.ApprovalRequest) (*pluginv1.ApprovalResponse, error) {
	h := s.h
	if h.Decider == nil {
		return nil, status.Error(codes.Unimplemented, "the host offers no approval decider")
	}
	if req.GetToolCallId() == "" || (h.Calls != nil && !h.Calls.Active(req.GetToolCallId())) {
		return nil, status.Errorf(codes.FailedPrecondition,
			"approval requested by plugin %s with no tool call in progress (tool call id %q)", h.Plugin, req.GetToolCallId())
	}
	r := approval.Request{
		ToolCallID: req.GetToolCallId(), ToolName: req.GetToolName(),
		Action: req.GetAction(), Description: req.GetDescription(),
	}
	for _, d := range req.GetDisplay() {
		r.Display = append(r.Display, approval.Display{Kind: d.GetKind(), Data: json.RawMessage(d.GetData())})
	}
	d, err := h.Decider.Decide(ctx, r)
	if err != nil {
		return nil, status.Errorf(codes.Aborted, "approval: %v", err)
	}
	return &pluginv1.ApprovalResponse{Approved: d.Approved, Feedback: d.Feedback}, nil
}

type environmentServer struct {
	pluginv1.UnimplementedEnvironmentServer
	h *Host
}

func (s environmentServer) Get(context.Context, *pluginv1.EnvironmentRequest) (*pluginv1.EnvironmentInfo, error) {
	now := time.Now
	if s.h.Now != nil {
		now = s.h.Now
	}
	e := s.h.Env
	return &pluginv1.EnvironmentInfo{Os: e.OS, ShellName: e.ShellName, ShellPath: e.ShellPath,
		WorkDir: e.WorkDir, NowUnixNano: now().UnixNano()}, nil
}

type sessionServer struct {
	pluginv1.UnimplementedSessionServer
	h *Host
}

func (s sessionServer) Get(context.Context, *pluginv1.SessionRequest) (*pluginv1.SessionInfo, error) {
	ss := s.h.Session
	return &pluginv1.SessionInfo{Id: ss.ID, WorkDir: ss.WorkDir, StateDir: ss.StateDir}, nil
}

type configServer struct {
	pluginv1.UnimplementedConfigServer
	h *Host
}

func (s configServer) Get(_ context.Context, req *pluginv1.ConfigRequest) (*pluginv1.ConfigResponse, error) {
	raw, ok := s.h.Configs[req.GetToolName()]
	if !ok {
		return &pluginv1.ConfigResponse{}, nil
	}
	if !json.Valid(raw) {
		return nil, status.Error(codes.Internal, fmt.Sprintf("config of %s is not valid JSON", req.GetToolName()))
	}
	return &pluginv1.ConfigResponse{Json: string(raw)}, nil
}
