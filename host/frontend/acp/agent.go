// Package acp serves the Agent Client Protocol (agentclientprotocol.com)
// on stdio with github.com/coder/acp-go-sdk, for editors (Zed, JetBrains,
// Neovim, Emacs): `kosong-host acp`. Each ACP session is a kosong session
// (host/conversation): the same loop, toolset and approval flow as
// the terminal's, its history saved after each turn and loadable by id.
// Permission requests map onto the approval flow (allow once, allow always
// = approve for the session, reject); the modes ask and yolo are its
// policy; the client's MCP servers become tool sources of the session.
// With Config.Server set (`acp --server URL`) the sessions are a server's
// instead (bridge.go): session/new creates one there, prompts and cancels
// go to it, its events come back as updates and its approval requests as
// permission requests.
package acp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/remote"
	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/providers"
)

// The modes of a session: the approval policy.
const (
	ModeAsk  = "ask"
	ModeYolo = "yolo"
)

// The permission options offered for an approval.
const (
	optionApprove           = "approve"
	optionApproveForSession = "approve_for_session"
	optionReject            = "reject"
)

// Config configures Serve.
type Config struct {
	// Open builds a session's conversation.
	Open conversation.Opener
	// Server, when set, makes the sessions a server's (bridge.go); Open
	// is then not used.
	Server *serverclient.Client
	// Yolo starts sessions in the yolo mode.
	Yolo bool
	// Images says the model declares image input: the prompt capability
	// image is announced, and image blocks reach the model.
	Images bool
	// Name and Version are the agent's, for initialize.
	Name, Title, Version string
	Logger               hclog.Logger
}

// Agent implements acpsdk.Agent over conversations.
type Agent struct {
	cfg  Config
	conn *acpsdk.AgentSideConnection

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
	// client are the capabilities the client advertised in initialize.
	client acpsdk.ClientCapabilities
}

type session struct {
	id   string
	cwd  string
	conv *conversation.Conversation
	// remote is the server's session (Config.Server); conv is nil then.
	remote *remote.Session
	out    *updates
	files  *sessionFiles
}

var (
	_ acpsdk.Agent       = (*Agent)(nil)
	_ acpsdk.AgentLoader = (*Agent)(nil)
)

// Serve serves ACP on in/out until the client disconnects or ctx ends;
// then every session's turn is cancelled, its history saved and its
// plugins stopped.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	a := &Agent{cfg: cfg, sessions: map[string]*session{}}
	w := &lockedWriter{w: out}
	a.conn = acpsdk.NewAgentSideConnection(a, w, checkJSON(in, w))
	a.conn.SetLogger(slog.New(slog.NewTextHandler(cfg.Logger.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}),
		&slog.HandlerOptions{Level: slog.LevelWarn})))
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	a.closeAll()
	return nil
}

func (a *Agent) closeAll() {
	a.mu.Lock()
	a.closed = true
	sessions := a.sessions
	a.sessions = map[string]*session{}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.remote != nil {
				s.remote.Close()
				return
			}
			s.conv.Close()
		}()
	}
	wg.Wait()
}

// Initialize implements acpsdk.Agent.
func (a *Agent) Initialize(ctx context.Context, req acpsdk.InitializeRequest) (acpsdk.InitializeResponse, error) {
	a.mu.Lock()
	a.client = req.ClientCapabilities
	a.mu.Unlock()
	info := &acpsdk.Implementation{Name: a.cfg.Name, Version: a.cfg.Version}
	if a.cfg.Title != "" {
		info.Title = acpsdk.Ptr(a.cfg.Title)
	}
	return acpsdk.InitializeResponse{
		ProtocolVersion: acpsdk.ProtocolVersionNumber,
		AgentCapabilities: acpsdk.AgentCapabilities{
			LoadSession:        true,
			McpCapabilities:    acpsdk.McpCapabilities{Http: true, Sse: true},
			PromptCapabilities: acpsdk.PromptCapabilities{EmbeddedContext: true, Image: a.cfg.Images},
		},
		AgentInfo:   info,
		AuthMethods: []acpsdk.AuthMethod{},
	}, nil
}

// Authenticate implements acpsdk.Agent: there is nothing to log in to (the
// providers read their keys from the environment).
func (a *Agent) Authenticate(context.Context, acpsdk.AuthenticateRequest) (acpsdk.AuthenticateResponse, error) {
	return acpsdk.AuthenticateResponse{}, nil
}

// NewSession implements acpsdk.Agent.
func (a *Agent) NewSession(ctx context.Context, req acpsdk.NewSessionRequest) (acpsdk.NewSessionResponse, error) {
	if a.cfg.Server != nil {
		s, err := a.attach(ctx, req.Cwd, "", req.McpServers)
		if err != nil {
			return acpsdk.NewSessionResponse{}, err
		}
		return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(s.id)}, nil
	}
	s, err := a.open(ctx, req.Cwd, "", req.McpServers)
	if err != nil {
		return acpsdk.NewSessionResponse{}, err
	}
	defer func() { go a.advertiseCommands(s) }()
	return acpsdk.NewSessionResponse{SessionId: acpsdk.SessionId(s.id), Modes: a.modes(s)}, nil
}

// LoadSession implements acpsdk.AgentLoader: the kosong session of that id,
// its history replayed as updates before the answer.
func (a *Agent) LoadSession(ctx context.Context, req acpsdk.LoadSessionRequest) (acpsdk.LoadSessionResponse, error) {
	id := string(req.SessionId)
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if a.cfg.Server != nil {
		if s == nil {
			if _, err := a.attach(ctx, req.Cwd, id, req.McpServers); err != nil {
				return acpsdk.LoadSessionResponse{}, err
			}
		}
		return acpsdk.LoadSessionResponse{}, nil
	}
	if s == nil {
		var err error
		if s, err = a.open(ctx, req.Cwd, id, req.McpServers); err != nil {
			return acpsdk.LoadSessionResponse{}, err
		}
	}
	switch s.files.mode() {
	case ModeYolo:
		s.conv.Approvals().SetYolo(true)
	case ModePlan:
		s.conv.SetPlanMode(true)
	}
	s.out.replay(ctx, s.conv.History(), s.files.displays())
	defer func() { go a.advertiseCommands(s) }()
	return acpsdk.LoadSessionResponse{Modes: a.modes(s)}, nil
}

func (a *Agent) open(ctx context.Context, cwd, resume string, servers []acpsdk.McpServer) (*session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams(fmt.Sprintf("cwd must be an absolute path, not %q", cwd))
	}
	mcp, err := mcpServers(servers)
	if err != nil {
		return nil, invalidParams(err.Error())
	}
	s := &session{cwd: cwd, files: &sessionFiles{}}
	s.out = &updates{conn: a.conn, session: s, logger: a.cfg.Logger}
	a.mu.Lock()
	client := a.client
	a.mu.Unlock()
	req := conversation.Request{WorkDir: cwd, Resume: resume, Yolo: a.cfg.Yolo, MCPServers: mcp,
		Ask: func(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
			return a.ask(ctx, s, req)
		},
		Questions: approval.UserInputFunc(func(ctx context.Context, req approval.QuestionRequest) (approval.Answers, error) {
			return a.askQuestions(ctx, s, req)
		})}
	if lendsFiles(client) {
		req.Editor = &editorFiles{conn: a.conn, session: s}
	}
	if client.Terminal {
		req.Terminal = &editorTerminal{conn: a.conn, session: s}
	}
	conv, err := a.cfg.Open(ctx, req)
	if err != nil {
		if resume != "" && strings.Contains(err.Error(), "no session") {
			return nil, invalidParams(fmt.Sprintf("unknown session %s: %v", resume, err))
		}
		return nil, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	s.id, s.conv = conv.ID(), conv
	if sess := conv.Session(); sess != nil {
		s.files.dir = sess.Dir
	}
	conv.SetObserver(s.out)
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		conv.Close()
		return nil, errors.New("the connection is closing")
	}
	a.sessions[s.id] = s
	a.mu.Unlock()
	return s, nil
}

func invalidParams(msg string) *acpsdk.RequestError {
	return &acpsdk.RequestError{Code: -32602, Message: "Invalid params: " + msg, Data: map[string]any{"error": msg}}
}

// mcpServers turns the client's MCP servers into the agent's MCP server
// entries; their tools are named SERVER__TOOL.
func mcpServers(in []acpsdk.McpServer) ([]spec.MCPServer, error) {
	var out []spec.MCPServer
	for i, m := range in {
		e := spec.MCPServer{Prefix: true, File: "ACP client", Line: i + 1}
		switch {
		case m.Stdio != nil:
			e.Name, e.Command, e.Args = m.Stdio.Name, m.Stdio.Command, m.Stdio.Args
			e.Env = map[string]string{}
			for _, v := range m.Stdio.Env {
				e.Env[v.Name] = v.Value
			}
		case m.Http != nil:
			e.Name, e.URL = m.Http.Name, m.Http.Url
			e.Headers = map[string]string{}
			for _, h := range m.Http.Headers {
				e.Headers[h.Name] = h.Value
			}
		case m.Sse != nil:
			e.Name, e.URL, e.SSE = m.Sse.Name, m.Sse.Url, true
			e.Headers = map[string]string{}
			for _, h := range m.Sse.Headers {
				e.Headers[h.Name] = h.Value
			}
		default:
			return nil, fmt.Errorf("mcpServers[%d]: unsupported transport", i)
		}
		if e.Name == "" {
			return nil, fmt.Errorf("mcpServers[%d]: a server needs a name", i)
		}
		out = append(out, e)
	}
	return out, nil
}

func (a *Agent) modes(s *session) *acpsdk.SessionModeState {
	cur := ModeAsk
	if s.conv.Approvals().Yolo() {
		cur = ModeYolo
	}
	modes := []acpsdk.SessionMode{
		{Id: ModeAsk, Name: "Ask", Description: acpsdk.Ptr("Ask before commands, edits and other actions that need approval")},
		{Id: ModeYolo, Name: "Yolo", Description: acpsdk.Ptr("Approve every action without asking")},
	}
	if s.conv.Approvals().YoloForbidden() != nil {
		modes = modes[:1] // the admin policy forbids yolo
	}
	return withPlanMode(s, &acpsdk.SessionModeState{CurrentModeId: acpsdk.SessionModeId(cur), AvailableModes: modes})
}

func (a *Agent) find(id acpsdk.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[string(id)]
	if s == nil {
		return nil, invalidParams(fmt.Sprintf("unknown session %q: start one with session/new or session/load", id))
	}
	return s, nil
}

// Prompt implements acpsdk.Agent: one turn of the session's loop.
func (a *Agent) Prompt(ctx context.Context, req acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	s, err := a.find(req.SessionId)
	if err != nil {
		return acpsdk.PromptResponse{}, err
	}
	if s.remote != nil {
		return a.promptRemote(ctx, s, req)
	}
	content, err := promptContent(req.Prompt, a.cfg.Images && s.conv.TakesImages())
	if err != nil {
		return acpsdk.PromptResponse{}, invalidParams(err.Error())
	}
	if res, ok, err := a.runCommand(ctx, s, promptText(req.Prompt)); ok {
		return res, err
	}
	for {
		res, err := s.conv.TurnContent(ctx, content)
		var me *loop.MaxStepsError
		switch {
		case errors.Is(err, conversation.ErrBusy):
			// A newer prompt replaces the running one (the SDK has
			// cancelled it): wait for it to wind down.
			s.conv.Cancel()
			select {
			case <-s.conv.Idle():
				continue
			case <-ctx.Done():
				return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
			}
		case res.Reason == loop.StopCancelled || ctx.Err() != nil:
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
		case errors.As(err, &me):
			return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonMaxTurnRequests}, nil
		case err != nil:
			return acpsdk.PromptResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
	}
}

// promptContent is the user's message of a prompt: its text (promptText)
// first, then its images (image blocks, embedded image resources) as data
// URLs when the model takes images. An image the model cannot take, or a
// prompt with neither text nor images, is an error.
func promptContent(blocks []acpsdk.ContentBlock, images bool) ([]providers.ContentPart, error) {
	var imgs []providers.ContentPart
	for i, b := range blocks {
		media, data := "", ""
		switch {
		case b.Image != nil:
			media, data = b.Image.MimeType, b.Image.Data
		case b.Resource != nil && b.Resource.Resource.BlobResourceContents != nil &&
			strings.HasPrefix(derefString(b.Resource.Resource.BlobResourceContents.MimeType), "image/"):
			r := b.Resource.Resource.BlobResourceContents
			media, data = *r.MimeType, r.Blob
		default:
			continue
		}
		if !images {
			return nil, fmt.Errorf("prompt[%d]: the model does not take images (promptCapabilities.image is false)", i)
		}
		if !strings.HasPrefix(media, "image/") || data == "" {
			return nil, fmt.Errorf("prompt[%d]: an image needs an image/* mimeType and base64 data", i)
		}
		if _, err := base64.StdEncoding.DecodeString(data); err != nil {
			return nil, fmt.Errorf("prompt[%d]: the image data is not base64: %v", i, err)
		}
		imgs = append(imgs, providers.ContentPart{Type: providers.PartImage, ImageURL: "data:" + media + ";base64," + data})
	}
	text := promptText(blocks)
	if strings.TrimSpace(text) == "" && len(imgs) == 0 {
		return nil, errors.New("the prompt has no text")
	}
	if text == "" {
		return imgs, nil
	}
	return append([]providers.ContentPart{providers.TextPart(text)}, imgs...), nil
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// promptText joins the prompt's text, embedded resources and resource
// links into the user's message.
func promptText(blocks []acpsdk.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			parts = append(parts, fmt.Sprintf("@%s (%s)", b.ResourceLink.Name, b.ResourceLink.Uri))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.Uri, r.Text))
		}
	}
	return strings.Join(parts, "\n\n")
}

// Cancel implements acpsdk.Agent: the session's turn and its tool calls are
// cancelled; nothing happens when no turn runs.
func (a *Agent) Cancel(ctx context.Context, req acpsdk.CancelNotification) error {
	if s, err := a.find(req.SessionId); err == nil {
		if s.remote != nil {
			s.remote.Cancel()
			return nil
		}
		s.conv.Cancel()
	}
	return nil
}

// SetSessionMode implements acpsdk.Agent: ask or yolo.
func (a *Agent) SetSessionMode(ctx context.Context, req acpsdk.SetSessionModeRequest) (acpsdk.SetSessionModeResponse, error) {
	s, err := a.find(req.SessionId)
	if err != nil {
		return acpsdk.SetSessionModeResponse{}, err
	}
	if s.remote != nil {
		return acpsdk.SetSessionModeResponse{}, invalidParams("a server's session keeps the mode it was created with")
	}
	if err := s.conv.Approvals().YoloForbidden(); err != nil && req.ModeId == ModeYolo {
		return acpsdk.SetSessionModeResponse{}, invalidParams(err.Error()) // the admin policy's
	}
	if a.setPlanMode(ctx, s, req.ModeId) {
		if err := s.files.saveMode(string(req.ModeId)); err != nil {
			a.cfg.Logger.Warn("acp: the mode was not saved for session/load", "error", err)
		}
		return acpsdk.SetSessionModeResponse{}, nil
	}
	switch string(req.ModeId) {
	case ModeAsk:
		s.conv.Approvals().SetYolo(false)
	case ModeYolo:
		s.conv.Approvals().SetYolo(true)
	default:
		return acpsdk.SetSessionModeResponse{}, invalidParams(fmt.Sprintf("unknown mode %q: use ask, yolo or plan", req.ModeId))
	}
	if err := s.files.saveMode(string(req.ModeId)); err != nil {
		a.cfg.Logger.Warn("acp: the mode was not saved for session/load", "error", err)
	}
	s.out.send(ctx, acpsdk.SessionUpdate{CurrentModeUpdate: &acpsdk.SessionCurrentModeUpdate{CurrentModeId: req.ModeId}})
	return acpsdk.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption implements acpsdk.Agent (not offered).
func (a *Agent) SetSessionConfigOption(context.Context, acpsdk.SetSessionConfigOptionRequest) (acpsdk.SetSessionConfigOptionResponse, error) {
	return acpsdk.SetSessionConfigOptionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionSetConfigOption)
}

// ListSessions implements acpsdk.Agent (not offered; kosong-host sessions
// lists them).
func (a *Agent) ListSessions(context.Context, acpsdk.ListSessionsRequest) (acpsdk.ListSessionsResponse, error) {
	return acpsdk.ListSessionsResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionList)
}

// ResumeSession implements acpsdk.Agent (not offered; session/load is).
func (a *Agent) ResumeSession(context.Context, acpsdk.ResumeSessionRequest) (acpsdk.ResumeSessionResponse, error) {
	return acpsdk.ResumeSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionResume)
}

// CloseSession implements acpsdk.Agent (not offered).
func (a *Agent) CloseSession(context.Context, acpsdk.CloseSessionRequest) (acpsdk.CloseSessionResponse, error) {
	return acpsdk.CloseSessionResponse{}, acpsdk.NewMethodNotFound(acpsdk.AgentMethodSessionClose)
}

// ask asks the client's permission for an approval request.
func (a *Agent) ask(ctx context.Context, s *session, req approval.Request) (approval.Answer, string, error) {
	tc := acpsdk.ToolCallUpdate{ToolCallId: acpsdk.ToolCallId(req.ToolCallID), Title: acpsdk.Ptr(req.Description),
		Status: acpsdk.Ptr(acpsdk.ToolCallStatusPending), Content: displayContent(req.Display)}
	if tc.Title == nil || *tc.Title == "" {
		tc.Title = acpsdk.Ptr(req.ToolName + ": " + req.Action)
	}
	// The host names the tool and the plugin; the description and the
	// action are the plugin's own words.
	session := req.Action
	if req.Plugin != "" {
		tc.Title = acpsdk.Ptr(fmt.Sprintf("%s (plugin %s says: %s)", req.ToolName, req.Plugin, *tc.Title))
		session = fmt.Sprintf("%s of plugin %s: %s", req.ToolName, req.Plugin, req.Action)
	}
	resp, err := a.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{SessionId: acpsdk.SessionId(s.id), ToolCall: tc,
		Options: []acpsdk.PermissionOption{
			{OptionId: optionApprove, Name: "Approve once", Kind: acpsdk.PermissionOptionKindAllowOnce},
			{OptionId: optionApproveForSession, Name: "Approve for this session (" + session + ")", Kind: acpsdk.PermissionOptionKindAllowAlways},
			{OptionId: optionReject, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
		}})
	if err != nil {
		if ctx.Err() != nil {
			return approval.Reject, "", ctx.Err()
		}
		a.cfg.Logger.Warn("acp: permission request failed; rejected", "tool", req.ToolName, "error", err)
		return approval.Reject, "", nil
	}
	if resp.Outcome.Selected == nil {
		// cancelled: the turn is being cancelled
		return approval.Reject, "", nil
	}
	switch string(resp.Outcome.Selected.OptionId) {
	case optionApprove:
		return approval.Approve, "", nil
	case optionApproveForSession:
		return approval.ApproveForSession, "", nil
	}
	feedback, _ := resp.Meta["feedback"].(string)
	return approval.Reject, feedback, nil
}
