package pluginsdk

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"google.golang.org/grpc"

	"github.com/kosong-host/kosong-host/pluginsdk/proto/pluginv1"
)

type toolCallKey struct{}

type toolCall struct{ id, name string }

// ToolCallID is the id of the tool call being run, or "" outside a call.
func ToolCallID(ctx context.Context) string {
	tc, _ := ctx.Value(toolCallKey{}).(toolCall)
	return tc.id
}

func withToolCall(ctx context.Context, id, name string) context.Context {
	return context.WithValue(ctx, toolCallKey{}, toolCall{id: id, name: name})
}

// ErrNoToolCall is returned by Approval.Request outside of a tool call.
var ErrNoToolCall = errors.New("approval requested with no tool call in progress")

type approvalClient struct{ c pluginv1.ApprovalClient }

func (a approvalClient) Request(ctx context.Context, action, description string, display ...DisplayBlock) (Decision, error) {
	tc, ok := ctx.Value(toolCallKey{}).(toolCall)
	if !ok || tc.id == "" {
		return Decision{}, ErrNoToolCall
	}
	resp, err := a.c.Request(ctx, &pluginv1.ApprovalRequest{
		ToolCallId: tc.id, ToolName: tc.name, Action: action, Description: description,
		Display: toProtoDisplay(display),
	})
	if err != nil {
		return Decision{}, err
	}
	return Decision{Approved: resp.GetApproved(), Feedback: resp.GetFeedback()}, nil
}

type environment struct{ info *pluginv1.EnvironmentInfo }

func (e environment) OS() string { return e.info.GetOs() }
func (e environment) Shell() Shell {
	return Shell{Name: e.info.GetShellName(), Path: e.info.GetShellPath()}
}
func (e environment) WorkDir() string { return e.info.GetWorkDir() }
func (e environment) Now() time.Time  { return time.Now() }

type session struct{ info *pluginv1.SessionInfo }

func (s session) ID() string       { return s.info.GetId() }
func (s session) WorkDir() string  { return s.info.GetWorkDir() }
func (s session) StateDir() string { return s.info.GetStateDir() }

type config struct{ raw json.RawMessage }

func (c config) Raw() json.RawMessage { return c.raw }
func (c config) Decode(v any) error {
	if len(c.raw) == 0 {
		return nil
	}
	return json.Unmarshal(c.raw, v)
}

// capabilities builds the capability values a tool's constructor receives,
// from the one connection to the host's capability server. Snapshot
// capabilities (Environment, Session) are fetched once per load; Config once
// per tool.
type capabilities struct {
	conn    *grpc.ClientConn
	offered map[string]bool
	env     Environment
	session Session
}

func newCapabilities(ctx context.Context, conn *grpc.ClientConn, offered []string, needed map[string]bool) (*capabilities, error) {
	c := &capabilities{conn: conn, offered: map[string]bool{}}
	for _, name := range offered {
		c.offered[name] = true
	}
	if c.offered[CapEnvironment] && needed[CapEnvironment] {
		info, err := pluginv1.NewEnvironmentClient(conn).Get(ctx, &pluginv1.EnvironmentRequest{})
		if err != nil {
			return nil, err
		}
		c.env = environment{info: info}
	}
	if c.offered[CapSession] && needed[CapSession] {
		info, err := pluginv1.NewSessionClient(conn).Get(ctx, &pluginv1.SessionRequest{})
		if err != nil {
			return nil, err
		}
		c.session = session{info: info}
	}
	return c, nil
}

// forTool returns the capabilities offered to one tool, by wire name.
func (c *capabilities) forTool(ctx context.Context, tool string, needs []string) (map[string]any, error) {
	caps := map[string]any{}
	for _, name := range needs {
		if !c.offered[name] {
			continue
		}
		switch name {
		case CapApproval:
			caps[name] = approvalClient{c: pluginv1.NewApprovalClient(c.conn)}
		case CapEnvironment:
			caps[name] = c.env
		case CapSession:
			caps[name] = c.session
		case CapConfig:
			resp, err := pluginv1.NewConfigClient(c.conn).Get(ctx, &pluginv1.ConfigRequest{ToolName: tool})
			if err != nil {
				return nil, err
			}
			var raw json.RawMessage
			if js := resp.GetJson(); js != "" {
				raw = json.RawMessage(js)
			}
			caps[name] = config{raw: raw}
		}
	}
	return caps, nil
}
