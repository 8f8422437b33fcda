package acp

import (
	"context"
	"encoding/json"

	acpsdk "github.com/coder/acp-go-sdk"
)

// MethodReload is the extension method that reloads a session's agent.
const MethodReload = "_kosong/reload"

var _ acpsdk.ExtensionMethodHandler = (*Agent)(nil)

// HandleExtensionMethod implements acpsdk.ExtensionMethodHandler:
// `_kosong/steer` (steer.go) and `_kosong/reload` {sessionId} reloads the session's agent spec. The answer
// names the plugins started, stopped and kept and the tools once the reload
// takes effect (at the next step of a running turn, at once when idle); a
// broken edit is an error and the old toolset stays.
func (a *Agent) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case MethodReload:
		return a.reload(ctx, params)
	case MethodSteer:
		return a.steer(params)
	}
	return nil, acpsdk.NewMethodNotFound(method)
}

func (a *Agent) reload(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		SessionID acpsdk.SessionId `json:"sessionId"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" {
		return nil, invalidParams("_kosong/reload needs {\"sessionId\": ID}")
	}
	s, err := a.find(p.SessionID)
	if err != nil {
		return nil, err
	}
	if s.remote != nil {
		return nil, &acpsdk.RequestError{Code: -32603, Message: "a server's session reloads its agent in the server"}
	}
	res, err := s.conv.ReloadAgent(ctx)
	if err != nil {
		return nil, &acpsdk.RequestError{Code: -32603, Message: err.Error()}
	}
	return map[string]any{"started": nonNil(res.Started), "stopped": nonNil(res.Stopped), "kept": nonNil(res.Kept),
		"tools": nonNil(res.Tools), "unapplied": nonNil(res.Unapplied)}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
