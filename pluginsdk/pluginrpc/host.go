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
	resp, err := pluginv1.NewApprovalClient(c.conn).Request(ctx, toProtoApprovalRequest(req))
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
	return fromProtoEnvironment(info), nil
}

// Session fetches the host's session.
func (c *HostClient) Session(ctx context.Context) (Session, error) {
	info, err := pluginv1.NewSessionClient(c.conn).Get(ctx, &pluginv1.SessionRequest{})
	if err != nil {
		return Session{}, err
	}
	return fromProtoSession(info), nil
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
	_, err := pluginv1.NewProgressClient(c.conn).Report(ctx, toProtoProgress(p))
	return err
}

// AskUser asks the user questions for a running call.
func (c *HostClient) AskUser(ctx context.Context, req QuestionRequest) (Answers, error) {
	resp, err := pluginv1.NewUserInputClient(c.conn).Ask(ctx, toProtoQuestionRequest(req))
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
	return fromProtoModel(info), nil
}

// ReadTextFile reads a file through the host's Editor capability.
func (c *HostClient) ReadTextFile(ctx context.Context, toolCallID, path string) (string, error) {
	resp, err := pluginv1.NewEditorClient(c.conn).ReadTextFile(ctx, &pluginv1.EditorReadRequest{ToolCallId: toolCallID, Path: path})
	if err != nil {
		return "", err
	}
	return resp.GetContent(), nil
}

// WriteTextFile writes a file through the host's Editor capability.
func (c *HostClient) WriteTextFile(ctx context.Context, toolCallID, path, content string) error {
	_, err := pluginv1.NewEditorClient(c.conn).WriteTextFile(ctx, &pluginv1.EditorWriteRequest{ToolCallId: toolCallID, Path: path, Content: content})
	return err
}

// RunInTerminal runs a command through the host's Terminal capability.
func (c *HostClient) RunInTerminal(ctx context.Context, req TerminalRun) (TerminalResult, error) {
	resp, err := pluginv1.NewTerminalClient(c.conn).Run(ctx, &pluginv1.TerminalRunRequest{ToolCallId: req.ToolCallID,
		Command: req.Command, Args: req.Args, Cwd: req.Cwd, OutputByteLimit: req.OutputByteLimit})
	if err != nil {
		return TerminalResult{}, err
	}
	return TerminalResult{Output: resp.GetOutput(), Truncated: resp.GetTruncated(), ExitCode: int(resp.GetExitCode()), Signal: resp.GetSignal()}, nil
}
