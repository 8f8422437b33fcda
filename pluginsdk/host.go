package pluginsdk

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

type toolCallKey struct{}

type toolCall struct {
	id, name string
	logger   hclog.Logger
}

// ToolCallID is the id of the tool call being run, or "" outside a call.
func ToolCallID(ctx context.Context) string {
	tc, _ := ctx.Value(toolCallKey{}).(toolCall)
	return tc.id
}

// ErrNoToolCall is returned by Approval.Request and Progress.Report outside
// of a tool call.
var ErrNoToolCall = errors.New("no tool call in progress")

func callOf(ctx context.Context) (toolCall, error) {
	tc, ok := ctx.Value(toolCallKey{}).(toolCall)
	if !ok || tc.id == "" {
		return toolCall{}, ErrNoToolCall
	}
	return tc, nil
}

type approvalClient struct{ host *pluginrpc.HostClient }

func (a approvalClient) Request(ctx context.Context, action, description string, display ...DisplayBlock) (Decision, error) {
	tc, err := callOf(ctx)
	if err != nil {
		return Decision{}, err
	}
	d, err := a.host.RequestApproval(ctx, pluginrpc.ApprovalRequest{
		ToolCallID: tc.id, ToolName: tc.name, Action: action, Description: description, Display: toRPCDisplay(display),
	})
	return Decision{Approved: d.Approved, Feedback: d.Feedback}, err
}

type progressClient struct{ host *pluginrpc.HostClient }

func (p progressClient) Report(ctx context.Context, done, total float64, message string) error {
	tc, err := callOf(ctx)
	if err != nil {
		return err
	}
	return p.host.ReportProgress(ctx, pluginrpc.ProgressReport{
		ToolCallID: tc.id, ToolName: tc.name, Progress: done, Total: total, Message: message,
	})
}

// noProgress drops the reports of a tool whose host offers no progress.
type noProgress struct{}

func (noProgress) Report(ctx context.Context, _, _ float64, _ string) error {
	_, err := callOf(ctx)
	return err
}

type userInputClient struct{ host *pluginrpc.HostClient }

func (u userInputClient) Ask(ctx context.Context, questions []Question) (Answers, error) {
	tc, err := callOf(ctx)
	if err != nil {
		return Answers{}, err
	}
	req := pluginrpc.QuestionRequest{ToolCallID: tc.id, ToolName: tc.name}
	for _, q := range questions {
		rq := pluginrpc.Question{Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect}
		for _, o := range q.Options {
			rq.Options = append(rq.Options, pluginrpc.QuestionOption{Label: o.Label, Description: o.Description})
		}
		req.Questions = append(req.Questions, rq)
	}
	a, err := u.host.AskUser(ctx, req)
	if err != nil {
		return Answers{}, err
	}
	if a.Answers == nil {
		a.Answers = map[string]string{}
	}
	return Answers{Answers: a.Answers, Dismissed: a.Dismissed}, nil
}

type editorClient struct{ host *pluginrpc.HostClient }

func (e editorClient) ReadTextFile(ctx context.Context, path string) (string, error) {
	call, err := callOf(ctx)
	if err != nil {
		return "", err
	}
	return e.host.ReadTextFile(ctx, call.id, path)
}

func (e editorClient) WriteTextFile(ctx context.Context, path, content string) error {
	call, err := callOf(ctx)
	if err != nil {
		return err
	}
	return e.host.WriteTextFile(ctx, call.id, path, content)
}

type terminalClient struct{ host *pluginrpc.HostClient }

func (t terminalClient) Run(ctx context.Context, command string, args []string, cwd string, limit int64) (TerminalResult, error) {
	call, err := callOf(ctx)
	if err != nil {
		return TerminalResult{}, err
	}
	r, err := t.host.RunInTerminal(ctx, pluginrpc.TerminalRun{ToolCallID: call.id, Command: command, Args: args, Cwd: cwd, OutputByteLimit: limit})
	return TerminalResult{Output: r.Output, Truncated: r.Truncated, ExitCode: r.ExitCode, Signal: r.Signal}, err
}

type model struct{ info pluginrpc.ModelInfo }

func (m model) Provider() string        { return m.info.Provider }
func (m model) Name() string            { return m.info.Name }
func (m model) Alias() string           { return m.info.Alias }
func (m model) Capabilities() []string  { return append([]string(nil), m.info.Capabilities...) }
func (m model) CapabilitiesKnown() bool { return m.info.CapabilitiesKnown }
func (m model) MaxContextSize() int64   { return m.info.MaxContextSize }
func (m model) Has(c string) bool {
	for _, have := range m.info.Capabilities {
		if have == c {
			return true
		}
	}
	return false
}

type environment struct{ info pluginrpc.Environment }

func (e environment) OS() string { return e.info.OS }
func (e environment) Shell() Shell {
	return Shell{Name: e.info.ShellName, Path: e.info.ShellPath}
}
func (e environment) WorkDir() string { return e.info.WorkDir }
func (e environment) Now() time.Time  { return time.Now() }

type session struct{ info pluginrpc.Session }

func (s session) ID() string       { return s.info.ID }
func (s session) WorkDir() string  { return s.info.WorkDir }
func (s session) StateDir() string { return s.info.StateDir }

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
	host    *pluginrpc.HostClient
	offered map[string]bool
	env     Environment
	session Session
	model   Model
}

func newCapabilities(ctx context.Context, host *pluginrpc.HostClient, offered []string, needed map[string]bool) (*capabilities, error) {
	c := &capabilities{host: host, offered: map[string]bool{}}
	if host == nil {
		return c, nil
	}
	for _, name := range offered {
		c.offered[name] = true
	}
	if c.offered[pluginrpc.CapEnvironment] && needed[pluginrpc.CapEnvironment] {
		info, err := host.Environment(ctx)
		if err != nil {
			return nil, err
		}
		c.env = environment{info: info}
	}
	if c.offered[pluginrpc.CapSession] && needed[pluginrpc.CapSession] {
		info, err := host.Session(ctx)
		if err != nil {
			return nil, err
		}
		c.session = session{info: info}
	}
	if c.offered[pluginrpc.CapModel] && needed[pluginrpc.CapModel] {
		info, err := host.Model(ctx)
		if err != nil {
			return nil, err
		}
		c.model = model{info: info}
	}
	return c, nil
}

// forTool returns the capabilities offered to one tool, by wire name.
func (c *capabilities) forTool(ctx context.Context, tool string, needs []string) (map[string]any, error) {
	caps := map[string]any{}
	for _, name := range needs {
		if !c.offered[name] {
			if name == pluginrpc.CapProgress {
				caps[name] = noProgress{}
			}
			continue
		}
		switch name {
		case pluginrpc.CapApproval:
			caps[name] = approvalClient{host: c.host}
		case pluginrpc.CapProgress:
			caps[name] = progressClient{host: c.host}
		case pluginrpc.CapEnvironment:
			caps[name] = c.env
		case pluginrpc.CapSession:
			caps[name] = c.session
		case pluginrpc.CapUserInput:
			caps[name] = userInputClient{host: c.host}
		case pluginrpc.CapModel:
			caps[name] = c.model
		case pluginrpc.CapEditor:
			caps[name] = editorClient{host: c.host}
		case pluginrpc.CapTerminal:
			caps[name] = terminalClient{host: c.host}
		case pluginrpc.CapConfig:
			raw, err := c.host.Config(ctx, tool)
			if err != nil {
				return nil, err
			}
			caps[name] = config{raw: raw}
		}
	}
	return caps, nil
}
