package pluginrpc

import (
	"context"
	"encoding/json"

	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

// HostClient is the plugin's one connection to the host's capability
// server, with a method per capability.
type HostClient struct {
	conn *grpc.ClientConn
}

// NewHostClient wraps a connection to the host's capability server.
func NewHostClient(conn *grpc.ClientConn) *HostClient { return &HostClient{conn: conn} }

// Close closes the connection.
func (c *HostClient) Close() error { return c.conn.Close() }

// RequestApproval asks the host to approve an action of a running call.
func (c *HostClient) RequestApproval(ctx context.Context, req ApprovalRequest) (Decision, error) {
	resp, err := pluginv1.NewApprovalClient(c.conn).Request(ctx, ToProtoApprovalRequest(req))
	if err != nil {
		return Decision{}, err
	}
	return Decision{Approved: resp.GetApproved(), Feedback: resp.GetFeedback()}, nil
}

// Environment fetches the host's environment.
func (c *HostClient) Environment(ctx context.Context) (Environment, error) {
	info, err := pluginv1.NewEnvironmentClient(c.conn).Get(ctx, &pluginv1.EnvironmentRequest{})
	if err != nil {
		return Environment{}, err
	}
	return FromProtoEnvironment(info), nil
}

// Session fetches the host's session.
func (c *HostClient) Session(ctx context.Context) (Session, error) {
	info, err := pluginv1.NewSessionClient(c.conn).Get(ctx, &pluginv1.SessionRequest{})
	if err != nil {
		return Session{}, err
	}
	return FromProtoSession(info), nil
}

// Config fetches a tool's config block; nil when none was given.
func (c *HostClient) Config(ctx context.Context, tool string) (json.RawMessage, error) {
	resp, err := pluginv1.NewConfigClient(c.conn).Get(ctx, &pluginv1.ConfigRequest{ToolName: tool})
	if err != nil {
		return nil, err
	}
	if js := resp.GetJson(); js != "" {
		return json.RawMessage(js), nil
	}
	return nil, nil
}

// ReportProgress tells the host how far a running call has got.
func (c *HostClient) ReportProgress(ctx context.Context, p ProgressReport) error {
	_, err := pluginv1.NewProgressClient(c.conn).Report(ctx, ToProtoProgress(p))
	return err
}

// AskUser asks the user questions for a running call.
func (c *HostClient) AskUser(ctx context.Context, req QuestionRequest) (Answers, error) {
	resp, err := pluginv1.NewUserInputClient(c.conn).Ask(ctx, ToProtoQuestionRequest(req))
	if err != nil {
		return Answers{}, err
	}
	return Answers{Answers: resp.GetAnswers(), Dismissed: resp.GetDismissed()}, nil
}

// Model fetches the facts of the session's model.
func (c *HostClient) Model(ctx context.Context) (ModelInfo, error) {
	info, err := pluginv1.NewModelClient(c.conn).Get(ctx, &pluginv1.ModelRequest{})
	if err != nil {
		return ModelInfo{}, err
	}
	return FromProtoModel(info), nil
}

// HostServer is the host side of every capability in plain Go values, for
// in-process harnesses (kosong-host serves its own in host/capability). An
// error is returned to the plugin as the RPC's error.
type HostServer interface {
	RequestApproval(ctx context.Context, req ApprovalRequest) (Decision, error)
	Environment(ctx context.Context) (Environment, error)
	Session(ctx context.Context) (Session, error)
	Config(ctx context.Context, tool string) (json.RawMessage, error)
	ReportProgress(ctx context.Context, p ProgressReport) error
}

// UserInputServer is the host side of the UserInput capability; a
// HostServer that implements it serves questions too.
type UserInputServer interface {
	AskUser(ctx context.Context, req QuestionRequest) (Answers, error)
}

// ModelServer is the host side of the Model capability; a HostServer that
// implements it serves model facts too.
type ModelServer interface {
	Model(ctx context.Context) (ModelInfo, error)
}

// ServeHost serves h on the plugin's broker as the capability server and
// returns its broker id, to send in the Load request.
func (r *Remote) ServeHost(h HostServer) uint32 {
	id := r.Broker.NextId()
	go r.Broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		s := grpc.NewServer(opts...)
		pluginv1.RegisterApprovalServer(s, approvalServer{h: h})
		pluginv1.RegisterEnvironmentServer(s, environmentServer{h: h})
		pluginv1.RegisterSessionServer(s, sessionServer{h: h})
		pluginv1.RegisterConfigServer(s, configServer{h: h})
		pluginv1.RegisterProgressServer(s, progressServer{h: h})
		if u, ok := h.(UserInputServer); ok {
			pluginv1.RegisterUserInputServer(s, userInputServer{h: u})
		}
		if m, ok := h.(ModelServer); ok {
			pluginv1.RegisterModelServer(s, modelServer{h: m})
		}
		return s
	})
	return id
}

type approvalServer struct {
	pluginv1.UnimplementedApprovalServer
	h HostServer
}

func (s approvalServer) Request(ctx context.Context, req *pluginv1.ApprovalRequest) (*pluginv1.ApprovalResponse, error) {
	d, err := s.h.RequestApproval(ctx, FromProtoApprovalRequest(req))
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
	e, err := s.h.Environment(ctx)
	if err != nil {
		return nil, err
	}
	return ToProtoEnvironment(e), nil
}

type sessionServer struct {
	pluginv1.UnimplementedSessionServer
	h HostServer
}

func (s sessionServer) Get(ctx context.Context, _ *pluginv1.SessionRequest) (*pluginv1.SessionInfo, error) {
	ss, err := s.h.Session(ctx)
	if err != nil {
		return nil, err
	}
	return ToProtoSession(ss), nil
}

type configServer struct {
	pluginv1.UnimplementedConfigServer
	h HostServer
}

func (s configServer) Get(ctx context.Context, req *pluginv1.ConfigRequest) (*pluginv1.ConfigResponse, error) {
	raw, err := s.h.Config(ctx, req.GetToolName())
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
	if err := s.h.ReportProgress(ctx, FromProtoProgress(req)); err != nil {
		return nil, err
	}
	return &pluginv1.ProgressAck{}, nil
}

type userInputServer struct {
	pluginv1.UnimplementedUserInputServer
	h UserInputServer
}

func (s userInputServer) Ask(ctx context.Context, req *pluginv1.QuestionRequest) (*pluginv1.QuestionResponse, error) {
	a, err := s.h.AskUser(ctx, FromProtoQuestionRequest(req))
	if err != nil {
		return nil, err
	}
	return &pluginv1.QuestionResponse{Answers: a.Answers, Dismissed: a.Dismissed}, nil
}

type modelServer struct {
	pluginv1.UnimplementedModelServer
	h ModelServer
}

func (s modelServer) Get(ctx context.Context, _ *pluginv1.ModelRequest) (*pluginv1.ModelInfo, error) {
	m, err := s.h.Model(ctx)
	if err != nil {
		return nil, err
	}
	return ToProtoModel(m), nil
}
