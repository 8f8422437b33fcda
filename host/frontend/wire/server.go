// Package wire serves kosong-host's wire protocol (`kosong-host run
// --wire`): JSON-RPC 2.0 over stdio, one message a line, following Kimi
// CLI's wire protocol where it fits (docs/wire.md). The client sends
// initialize (with its external tools and hook subscriptions), prompt,
// steer, replay, cancel and reload; the server sends every loop event as an
// `event` notification, and approval requests, questions, client hooks and
// external tool calls as `request` requests that wait for the client's
// answer. The turns run in a conversation (host/conversation), the
// same loop and approval flow as the terminal's.
package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/hooks"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// ProtocolVersion is the wire protocol version the server speaks; a client
// must speak a 1.x version.
const ProtocolVersion = "1.10"

// DefaultToolTimeout bounds a call of an external tool whose entry sets no
// timeout.
const DefaultToolTimeout = 60 * time.Second

// Config configures Serve.
type Config struct {
	In  io.Reader
	Out io.Writer
	// Open builds the conversation; Serve sets its Ask.
	Open    conversation.Opener
	Request conversation.Request
	// ServerName and Version answer initialize.
	ServerName, Version string
	Logger              hclog.Logger
}

// server is one wire connection.
type server struct {
	cfg  Config
	peer *peer
	conv *conversation.Conversation
	ctx  context.Context

	// questions: the client declared supports_question at initialize;
	// planTools: supports_plan_mode.
	questions bool
	planTools bool
	// clientHooks: the hooks the client subscribed to at initialize.
	clientHooks []hooks.Hook

	mu        sync.Mutex
	externals map[string]bool
	// approvals: the id of the approval request sent for each tool call
	// waiting for its answer, for the ApprovalResponse event's request_id.
	approvals map[string]string
	turns     sync.WaitGroup
}

// Serve opens the conversation and serves the connection until In ends (or
// ctx does): the running turn is then cancelled, its history saved and the
// agent stopped.
func Serve(ctx context.Context, cfg Config) error {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	s := &server{cfg: cfg, peer: newPeer(cfg.Out), externals: map[string]bool{}, approvals: map[string]string{}}
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		readErr <- readLines(cfg.In, func(b []byte) { lines <- append([]byte(nil), b...) })
		close(lines)
	}()
	// The conversation opens once the first message is read: an
	// initialize first says whether the client answers questions, which
	// decides whether tools that ask (AskUserQuestion) are loaded, and
	// whether it takes part in plan mode (EnterPlanMode, ExitPlanMode).
	var first []byte
	select {
	case first = <-lines:
	case <-ctx.Done():
		return ctx.Err()
	}
	caps, _ := firstCapabilities(first)
	s.questions, s.planTools = caps.SupportsQuestion, caps.SupportsPlanMode
	s.clientHooks = s.subscribedHooks(first)
	req := cfg.Request
	req.Ask = s.ask
	req.ClientHooks = s.clientHooks
	req.NoPlanTools = !s.planTools
	if s.questions {
		req.Questions = approval.UserInputFunc(s.askQuestions)
	}
	conv, err := cfg.Open(ctx, req)
	if err != nil {
		return err
	}
	s.conv = conv
	conv.SetObserver(loop.ObserverFunc(s.event))
	ctx, cancel := context.WithCancel(ctx)
	s.ctx = ctx
	if first != nil {
		s.handle(first)
	}
	var rerr error
loop:
	for {
		select {
		case b, ok := <-lines:
			if !ok {
				rerr = <-readErr
				break loop
			}
			s.handle(b)
		case <-ctx.Done():
			break loop
		}
	}
	// The client is gone: nobody answers any more.
	s.peer.close()
	conv.Cancel()
	cancel()
	s.turns.Wait()
	conv.Close()
	if rerr != nil {
		return fmt.Errorf("wire: reading stdin: %w", rerr)
	}
	return nil
}

func (s *server) handle(line []byte) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
		if err != nil {
			s.peer.respond(nil, nil, &rpcError{Code: codeParse, Message: "Invalid JSON format"})
		} else {
			s.peer.respond(m.ID, nil, &rpcError{Code: codeInvalidRequest, Message: "Invalid request"})
		}
		return
	}
	if m.Method == "" {
		if m.Result == nil && m.Error == nil {
			s.peer.respond(m.ID, nil, &rpcError{Code: codeInvalidRequest, Message: "Invalid response"})
			return
		}
		if !s.peer.deliver(m) {
			s.cfg.Logger.Warn("wire: an answer to no request waiting for one was ignored", "id", string(m.ID))
		}
		return
	}
	var result any
	var rerr *rpcError
	switch m.Method {
	case "initialize":
		result, rerr = s.initialize(m.Params)
	case "prompt":
		s.prompt(m)
		return
	case "reload":
		s.reload(m)
		return
	case "set_plan_mode":
		result, rerr = s.setPlanMode(m.Params)
	case "replay":
		result, rerr = s.replay()
	case "steer":
		result, rerr = s.steer(m.Params)
	case "cancel":
		if !s.conv.Cancel() {
			rerr = &rpcError{Code: codeBusy, Message: "No agent turn is in progress"}
		}
	default:
		rerr = &rpcError{Code: codeMethodNotFound, Message: "Unexpected method received: " + m.Method}
	}
	if len(m.ID) > 0 {
		s.peer.respond(m.ID, result, rerr)
	}
}

func invalidParams(method string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: fmt.Sprintf("Invalid parameters for method `%s`", method)}
}

// ---- prompt ----

type promptParams struct {
	UserInput json.RawMessage `json:"user_input"`
}

// userInput reads a string, or content parts whose text parts are joined.
func userInput(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, strings.TrimSpace(s) != ""
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	s = strings.Join(texts, "\n")
	return s, strings.TrimSpace(s) != ""
}

func (s *server) prompt(m message) {
	var p promptParams
	input, ok := "", false
	if json.Unmarshal(m.Params, &p) == nil {
		input, ok = userInput(p.UserInput)
	}
	if !ok {
		s.peer.respond(m.ID, nil, invalidParams("prompt"))
		return
	}
	if s.conv.Running() {
		s.peer.respond(m.ID, nil, &rpcError{Code: codeBusy, Message: conversation.ErrBusy.Error()})
		return
	}
	if s.runCommand(m, input) {
		return
	}
	s.turns.Add(1)
	go func() {
		defer s.turns.Done()
		s.emit("TurnBegin", map[string]any{"user_input": input})
		res, err := s.conv.Turn(s.ctx, input)
		var me *loop.MaxStepsError
		switch {
		case errors.Is(err, conversation.ErrBusy):
			s.peer.respond(m.ID, nil, &rpcError{Code: codeBusy, Message: err.Error()})
		case res.Reason == loop.StopCancelled || errors.Is(err, context.Canceled):
			s.peer.respond(m.ID, map[string]any{"status": "cancelled", "steps": res.Steps}, nil)
		case errors.As(err, &me):
			s.peer.respond(m.ID, map[string]any{"status": "max_steps_reached", "steps": res.Steps}, nil)
		case err == nil && res.Reason.AtLimit():
			// --max-turns, --max-tokens, --max-budget-usd (a LimitReached
			// event said which).
			s.peer.respond(m.ID, map[string]any{"status": string(res.Reason), "steps": res.Steps}, nil)
		case err != nil && isProviderError(err):
			s.peer.respond(m.ID, nil, &rpcError{Code: providerCode(err), Message: err.Error()})
		case err != nil:
			s.peer.respond(m.ID, nil, &rpcError{Code: codeInternal, Message: err.Error()})
		default:
			s.peer.respond(m.ID, map[string]any{"status": "finished", "steps": res.Steps}, nil)
		}
	}()
}

// steer sends user_input into the running turn (Conversation.Steer): it
// enters the history at the next step boundary, and a SteerInput event
// says so.
func (s *server) steer(params json.RawMessage) (any, *rpcError) {
	var p promptParams
	input, ok := "", false
	if json.Unmarshal(params, &p) == nil {
		input, ok = userInput(p.UserInput)
	}
	if !ok {
		return nil, invalidParams("steer")
	}
	if !s.conv.Steer(input) {
		return nil, &rpcError{Code: codeBusy, Message: "No agent turn is in progress"}
	}
	return map[string]any{"status": "steered"}, nil
}

// providerCode is Kimi's code for a provider's error: -32004 when the
// provider refused the credentials, else -32003.
func providerCode(err error) int {
	var pe *providers.Error
	if errors.As(err, &pe) && pe.Kind == providers.ErrAuth {
		return codeAuth
	}
	return codeProvider
}

func isProviderError(err error) bool {
	var pe *providers.Error
	return errors.As(err, &pe)
}

// ---- approvals ----

// ask sends an ApprovalRequest and reads the answer: approve,
// approve_for_session or reject (with feedback). An error, a bad answer or
// the end of the connection rejects.
func (s *server) ask(ctx context.Context, req approval.Request) (approval.Answer, string, error) {
	id := s.peer.nextID("approval")
	display := make([]json.RawMessage, 0, len(req.Display))
	for _, d := range req.Display {
		display = append(display, displayBlock(d.Kind, d.Data))
	}
	s.mu.Lock()
	s.approvals[req.ToolCallID] = id
	s.mu.Unlock()
	raw, err := s.peer.call(ctx, id, "request", map[string]any{"type": "ApprovalRequest", "payload": map[string]any{
		"id": id, "tool_call_id": req.ToolCallID, "sender": req.ToolName, "plugin": req.Plugin, "action": req.Action,
		"description": req.Description, "display": display,
		// Every approval comes from the session's own turn: subagents run
		// inside the Agent tool's call of that turn.
		"source_kind": "foreground_turn", "source_id": s.conv.ID(), "agent_id": s.conv.AgentName(),
		"subagent_type": nil, "source_description": nil,
	}})
	if err != nil {
		if ctx.Err() != nil {
			return approval.Reject, "", ctx.Err()
		}
		s.cfg.Logger.Warn("wire: approval request failed; rejected", "id", id, "error", err)
		return approval.Reject, "", nil
	}
	var ans struct {
		RequestID string `json:"request_id"`
		Response  string `json:"response"`
		Feedback  string `json:"feedback"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		s.cfg.Logger.Warn("wire: invalid approval answer; rejected", "id", id, "error", err)
		return approval.Reject, "", nil
	}
	if ans.RequestID != "" && ans.RequestID != id {
		s.cfg.Logger.Warn("wire: approval answer names another request", "id", id, "request_id", ans.RequestID)
	}
	switch ans.Response {
	case "approve":
		return approval.Approve, "", nil
	case "approve_for_session":
		return approval.ApproveForSession, "", nil
	}
	return approval.Reject, ans.Feedback, nil
}
