package pluginrpc

import (
	"context"
	"encoding/json"

	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// HostServer is the host side of every capability, in Go values: what
// kosong-host serves each plugin (host/capability) and what plugintest
// fakes. Its methods are named for the RPCs they answer. An error goes
// back to the plugin as the RPC's error: a gRPC status error keeps its
// code (FailedPrecondition for a request outside a running call,
// Unimplemented for a capability the host does not serve, Aborted when the
// user could not be asked), any other error is Unknown.
type HostServer interface {
	// RequestApproval asks the user to approve an action of a running call.
	RequestApproval(ctx context.Context, req ApprovalRequest) (Decision, error)
	// GetEnvironment describes the host's machine.
	GetEnvironment(ctx context.Context) (Environment, error)
	// GetSession describes the session, as this plugin sees it.
	GetSession(ctx context.Context) (Session, error)
	// GetConfig returns a tool's config block, nil when none was given.
	GetConfig(ctx context.Context, tool string) (json.RawMessage, error)
	// ReportProgress takes a running call's progress report.
	ReportProgress(ctx context.Context, p ProgressReport) error
	// AskUser asks the user a running call's questions.
	AskUser(ctx context.Context, req QuestionRequest) (Answers, error)
	// GetModel describes the session's model.
	GetModel(ctx context.Context) (ModelInfo, error)
}

// RegisterHost registers the capability services of h on s: the one
// capability server of a plugin, whether served on go-plugin's broker
// (Client.ServeHost of a launched plugin, and plugintest's) or on streams
// of a remote tool server's connection.
func RegisterHost(s *grpc.Server, h HostServer) {
	pluginv1.RegisterApprovalServer(s, approvalServer{h: h})
	pluginv1.RegisterEnvironmentServer(s, environmentServer{h: h})
	pluginv1.RegisterSessionServer(s, sessionServer{h: h})
	pluginv1.RegisterConfigServer(s, configServer{h: h})
	pluginv1.RegisterProgressServer(s, progressServer{h: h})
	pluginv1.RegisterUserInputServer(s, userInputServer{h: h})
	pluginv1.RegisterModelServer(s, modelServer{h: h})
	if e, ok := h.(EditorServer); ok {
		pluginv1.RegisterEditorServer(s, editorServer{h: e})
	}
	if t, ok := h.(TerminalServer); ok {
		pluginv1.RegisterTerminalServer(s, terminalServer{h: t})
	}
}

// TerminalRun is a command for the editor's terminal.
type TerminalRun struct {
	ToolCallID      string
	Command         string
	Args            []string
	Cwd             string
	OutputByteLimit int64
}

// TerminalResult is how a command in the editor's terminal ended.
type TerminalResult struct {
	Output    string
	Truncated bool
	// ExitCode is -1 when the command ended on Signal.
	ExitCode int
	Signal   string
}

// TerminalServer is the host side of the Terminal capability: the editor's
// terminal. A HostServer that implements it serves Terminal.
type TerminalServer interface {
	RunInTerminal(ctx context.Context, req TerminalRun) (TerminalResult, error)
}

type terminalServer struct {
	pluginv1.UnimplementedTerminalServer
	h TerminalServer
}

func (s terminalServer) Run(ctx context.Context, req *pluginv1.TerminalRunRequest) (*pluginv1.TerminalRunResponse, error) {
	r, err := s.h.RunInTerminal(ctx, TerminalRun{ToolCallID: req.GetToolCallId(), Command: req.GetCommand(), Args: req.GetArgs(),
		Cwd: req.GetCwd(), OutputByteLimit: req.GetOutputByteLimit()})
	if err != nil {
		return nil, err
	}
	return &pluginv1.TerminalRunResponse{Output: r.Output, Truncated: r.Truncated, ExitCode: int32(r.ExitCode), Signal: r.Signal}, nil
}

// EditorServer is the host side of the Editor capability: the files of the
// user's editor. A HostServer that implements it serves Editor (a separate
// interface, so that HostServers written before it still build).
type EditorServer interface {
	// ReadTextFile reads a file as the editor has it, for a running call.
	ReadTextFile(ctx context.Context, toolCallID, path string) (string, error)
	// WriteTextFile writes a file through the editor, for a running call.
	WriteTextFile(ctx context.Context, toolCallID, path, content string) error
}

type editorServer struct {
	pluginv1.UnimplementedEditorServer
	h EditorServer
}

func (s editorServer) ReadTextFile(ctx context.Context, req *pluginv1.EditorReadRequest) (*pluginv1.EditorReadResponse, error) {
	content, err := s.h.ReadTextFile(ctx, req.GetToolCallId(), req.GetPath())
	if err != nil {
		return nil, err
	}
	return &pluginv1.EditorReadResponse{Content: content}, nil
}

func (s editorServer) WriteTextFile(ctx context.Context, req *pluginv1.EditorWriteRequest) (*pluginv1.EditorWriteResponse, error) {
	if err := s.h.WriteTextFile(ctx, req.GetToolCallId(), req.GetPath(), req.GetContent()); err != nil {
		return nil, err
	}
	return &pluginv1.EditorWriteResponse{}, nil
}

type approvalServer struct {
	pluginv1.UnimplementedApprovalServer
	h HostServer
}

func (s approvalServer) Request(ctx context.Context, req *pluginv1.ApprovalRequest) (*pluginv1.ApprovalResponse, error) {
	d, err := s.h.RequestApproval(ctx, fromProtoApprovalRequest(req))
	if err != nil {
		return nil, err
	}
	return &pluginv1.ApprovalResponse{Approved: d.Approved, Feedback: d.Feedback}, nil
}

type environmentServer struct {
	pluginv1.UnimplementedEnvironmentServer
	h HostServer
}

func (s environmentServer) Get(ctx context.Context, _ *pluginv1.EnvironmentRequest) (*pluginv1.EnvironmentInfo, error) {
	e, err := s.h.GetEnvironment(ctx)
	if err != nil {
		return nil, err
	}
	return toProtoEnvironment(e), nil
}

type sessionServer struct {
	pluginv1.UnimplementedSessionServer
	h HostServer
}

func (s sessionServer) Get(ctx context.Context, _ *pluginv1.SessionRequest) (*pluginv1.SessionInfo, error) {
	ss, err := s.h.GetSession(ctx)
	if err != nil {
		return nil, err
	}
	return toProtoSession(ss), nil
}

type configServer struct {
	pluginv1.UnimplementedConfigServer
	h HostServer
}

func (s configServer) Get(ctx context.Context, req *pluginv1.ConfigRequest) (*pluginv1.ConfigResponse, error) {
	raw, err := s.h.GetConfig(ctx, req.GetToolName())
	if err != nil {
		return nil, err
	}
	return &pluginv1.ConfigResponse{Json: string(raw)}, nil
}

type progressServer struct {
	pluginv1.UnimplementedProgressServer
	h HostServer
}

func (s progressServer) Report(ctx context.Context, req *pluginv1.ProgressReport) (*pluginv1.ProgressAck, error) {
	if err := s.h.ReportProgress(ctx, fromProtoProgress(req)); err != nil {
		return nil, err
	}
	return &pluginv1.ProgressAck{}, nil
}

type userInputServer struct {
	pluginv1.UnimplementedUserInputServer
	h HostServer
}

func (s userInputServer) Ask(ctx context.Context, req *pluginv1.QuestionRequest) (*pluginv1.QuestionResponse, error) {
	a, err := s.h.AskUser(ctx, fromProtoQuestionRequest(req))
	if err != nil {
		return nil, err
	}
	return &pluginv1.QuestionResponse{Answers: a.Answers, Dismissed: a.Dismissed}, nil
}

type modelServer struct {
	pluginv1.UnimplementedModelServer
	h HostServer
}

func (s modelServer) Get(ctx context.Context, _ *pluginv1.ModelRequest) (*pluginv1.ModelInfo, error) {
	m, err := s.h.GetModel(ctx)
	if err != nil {
		return nil, err
	}
	return toProtoModel(m), nil
}
