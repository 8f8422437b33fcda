package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/remote"
	"github.com/kosong-host/kosong-host/host/serverclient"
)

// attach makes an ACP session of a server's session (Config.Server): a new
// one of cwd, or the session id (session/load), whose events the server
// still holds are replayed as updates before the answer. The server's
// approval and question requests become permission requests; another
// client's answer withdraws them.
func (a *Agent) attach(ctx context.Context, cwd, id string, servers []acpsdk.McpServer) (*session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams(fmt.Sprintf("cwd must be an absolute path, not %q", cwd))
	}
	if len(servers) > 0 {
		return nil, invalidParams("mcpServers: a server's session runs the tools of its own agent; the editor's MCP servers are not taken")
	}
	if id == "" {
		mode := serverclient.ModeAsk
		if a.cfg.Yolo {
			mode = serverclient.ModeYolo
		}
		info, err := a.cfg.Server.CreateSession(ctx, serverclient.CreateSession{Cwd: cwd, Mode: mode})
		if err != nil {
			return nil, serverError(err)
		}
		id = info.ID
	}
	s := &session{id: id, cwd: cwd, files: &sessionFiles{}}
	s.out = &updates{conn: a.conn, session: s, logger: a.cfg.Logger}
	// Events are relayed as they come, replayed ones included: the
	// session is known before the relay starts.
	rs, err := remote.Attach(ctx, remote.Config{Client: a.cfg.Server, ID: id, Observer: s.out,
		Ask: func(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
			return a.ask(ctx, s, req)
		},
		Questions: approval.UserInputFunc(func(ctx context.Context, req approval.QuestionRequest) (approval.Answers, error) {
			return a.askQuestions(ctx, s, req)
		}),
		Notice: func(text string) {
			s.out.send(context.Background(), acpsdk.UpdateAgentThoughtText(text+"\n"))
		}})
	if err != nil {
		return nil, serverError(err)
	}
	s.remote = rs
	if d := rs.WorkDir(); d != "" {
		s.cwd = d
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		rs.Close()
		return nil, errors.New("the connection is closing")
	}
	a.sessions[s.id] = s
	a.mu.Unlock()
	return s, nil
}

// serverError is the ACP error of a server's error answer.
func serverError(err error) error {
	var e *serverclient.Error
	if errors.As(err, &e) && (e.Status == 400 || e.Status == 404 || e.Status == 410 || e.Status == 422) {
		return invalidParams(e.Message)
	}
	return acpsdk.NewInternalError(map[string]any{"error": err.Error()})
}

// promptRemote runs one turn of a server's session.
func (a *Agent) promptRemote(ctx context.Context, s *session, req acpsdk.PromptRequest) (acpsdk.PromptResponse, error) {
	content, err := promptContent(req.Prompt, a.cfg.Images)
	if err != nil {
		return acpsdk.PromptResponse{}, invalidParams(err.Error())
	}
	res, err := s.remote.TurnContent(ctx, content)
	var me *loop.MaxStepsError
	switch {
	case res.Reason == loop.StopCancelled || ctx.Err() != nil:
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonCancelled}, nil
	case errors.As(err, &me):
		return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonMaxTurnRequests}, nil
	case err != nil:
		return acpsdk.PromptResponse{}, acpsdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return acpsdk.PromptResponse{StopReason: acpsdk.StopReasonEndTurn}, nil
}
