package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// The texts of failed external tool calls, as Kimi CLI's.
const (
	msgNoWire        = "Wire is not available for external tool calls."
	msgClosed        = "Wire connection closed before tool result was received."
	msgTurnEnded     = "Agent turn ended before tool result was received."
	msgInvalidResult = "Invalid tool result payload from client."
	briefExternal    = "External tool error"
)

// externalTool is a tool the wire client registered at initialize and runs
// itself. It goes through the toolset as any plugin tool does: its
// arguments are validated against its schema, its timeout applies, and it
// asks approval (action external:NAME) before the client is asked to run it.
type externalTool struct {
	spec      toolset.Spec
	peer      *peer
	approvals approval.Decider
}

func (t *externalTool) Spec() toolset.Spec { return t.spec }

func (t *externalTool) Call(ctx context.Context, id string, args json.RawMessage) toolset.Result {
	if t.peer.isClosed() {
		return toolset.Result{Kind: toolset.Failed, Message: msgNoWire, Brief: briefExternal}
	}
	d, err := t.approvals.Decide(ctx, approval.Request{ToolCallID: id, Plugin: "wire", ToolName: t.spec.Name,
		Action: "external:" + t.spec.Name, Description: fmt.Sprintf("Call external tool `%s`.", t.spec.Name)})
	if err != nil {
		return t.ended(ctx, err)
	}
	if !d.Approved {
		return toolset.RejectedResult(d.Feedback)
	}
	raw, err := t.peer.call(ctx, id, "request", map[string]any{"type": "ToolCallRequest", "payload": map[string]any{
		"id": id, "name": t.spec.Name, "arguments": string(args),
	}})
	if err != nil {
		return t.ended(ctx, err)
	}
	var ans struct {
		ToolCallID  string `json:"tool_call_id"`
		ReturnValue *struct {
			IsError bool              `json:"is_error"`
			Output  json.RawMessage   `json:"output"`
			Message string            `json:"message"`
			Display []json.RawMessage `json:"display"`
			// Rejected and Feedback: the client's user rejected the call
			// (a kosong-host extension).
			Rejected bool   `json:"rejected"`
			Feedback string `json:"feedback"`
		} `json:"return_value"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil || ans.ReturnValue == nil {
		return toolset.Result{Kind: toolset.Failed, Message: msgInvalidResult, Brief: briefExternal}
	}
	rv := ans.ReturnValue
	if rv.Rejected {
		return toolset.RejectedResult(rv.Feedback)
	}
	output, ok := outputParts(rv.Output)
	if !ok {
		return toolset.Result{Kind: toolset.Failed, Message: msgInvalidResult, Brief: briefExternal}
	}
	r := toolset.Result{Output: output, Message: rv.Message}
	for _, d := range rv.Display {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(d, &head) == nil && head.Type != "" {
			r.Display = append(r.Display, toolset.Display{Kind: head.Type, Data: d})
		}
	}
	if rv.IsError {
		r.Kind, r.Brief = toolset.Failed, briefExternal
	}
	return r
}

// ended is the result of a call whose answer never came.
func (t *externalTool) ended(ctx context.Context, err error) toolset.Result {
	var re *rpcError
	switch {
	case errors.As(err, &re):
		return toolset.Result{Kind: toolset.Failed, Message: re.Message, Brief: briefExternal}
	case errors.Is(err, errClosed):
		return toolset.Result{Kind: toolset.Failed, Message: msgClosed, Brief: briefExternal}
	case errors.Is(err, context.DeadlineExceeded):
		// The toolset reports the timeout.
		return toolset.Result{Kind: toolset.Failed, Message: msgTurnEnded, Brief: briefExternal}
	case ctx.Err() != nil:
		return toolset.Result{Kind: toolset.Failed, Message: msgTurnEnded, Brief: briefExternal}
	}
	return toolset.Result{Kind: toolset.Failed, Message: "External tool call failed: " + err.Error(), Brief: briefExternal}
}

// outputParts reads output: a string or content parts.
func outputParts(raw json.RawMessage) ([]providers.ContentPart, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []providers.ContentPart{providers.TextPart(s)}, true
	}
	var parts []providers.ContentPart
	if json.Unmarshal(raw, &parts) != nil {
		return nil, false
	}
	return parts, true
}

// ---- initialize ----

type externalDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Timeout (seconds) bounds each call; 0 is DefaultToolTimeout. A
	// kosong-host extension.
	Timeout float64 `json:"timeout"`
}

type initParams struct {
	ProtocolVersion *string `json:"protocol_version"`
	Client          struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"client"`
	ExternalTools []externalDecl     `json:"external_tools"`
	Capabilities  clientCapabilities `json:"capabilities"`
	Hooks         []hookSubscription `json:"hooks"`
}

// clientCapabilities are what a client declares it handles.
type clientCapabilities struct {
	// SupportsQuestion: the client answers QuestionRequests.
	SupportsQuestion bool `json:"supports_question"`
	// SupportsPlanMode: the client takes part in plan mode, so the model
	// is offered EnterPlanMode and ExitPlanMode (as Kimi CLI does).
	SupportsPlanMode bool `json:"supports_plan_mode"`
}

type rejectedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

func (s *server) initialize(raw json.RawMessage) (any, *rpcError) {
	var p initParams
	if err := json.Unmarshal(raw, &p); err != nil || p.ProtocolVersion == nil {
		return nil, invalidParams("initialize")
	}
	if v := *p.ProtocolVersion; v != "1" && !strings.HasPrefix(v, "1.") {
		return nil, &rpcError{Code: codeInvalidParams,
			Message: fmt.Sprintf("Unsupported protocol version %q: kosong-host speaks wire protocol %s (any 1.x client)", v, ProtocolVersion)}
	}
	if s.conv.Running() {
		return nil, &rpcError{Code: codeBusy, Message: "An agent turn is already in progress"}
	}
	s.cfg.Logger.Info("wire client", "name", p.Client.Name, "version", p.Client.Version)
	accepted, rejected := []string{}, []rejectedTool{}
	for _, d := range p.ExternalTools {
		if reason := s.addExternal(d); reason != "" {
			rejected = append(rejected, rejectedTool{Name: d.Name, Reason: reason})
			continue
		}
		accepted = append(accepted, d.Name)
	}
	res := map[string]any{
		"protocol_version": ProtocolVersion,
		"server":           map[string]string{"name": s.cfg.ServerName, "version": s.cfg.Version},
		"slash_commands":   s.slashCommands(),
		"capabilities":     map[string]bool{"supports_question": s.questions, "supports_plan_mode": s.planTools},
	}
	res["hooks"] = s.hooksResult()
	if len(p.ExternalTools) > 0 {
		res["external_tools"] = map[string]any{"accepted": accepted, "rejected": rejected}
	}
	return res, nil
}

// addExternal adds (or replaces) one external tool; it returns why it was
// rejected, "" if accepted.
func (s *server) addExternal(d externalDecl) string {
	if d.Name == "" {
		return "name is required"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.conv.Toolset()
	if _, taken := ts.Find(d.Name); taken && !s.externals[d.Name] {
		return "conflicts with builtin tool"
	}
	if d.Timeout < 0 {
		return "timeout must not be negative"
	}
	desc := d.Description
	if strings.TrimSpace(desc) == "" {
		desc = "No description provided."
	}
	params := d.Parameters
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{"type":"object"}`)
	}
	if err := checkSchema(params); err != nil {
		return err.Error()
	}
	timeout := DefaultToolTimeout
	if d.Timeout > 0 {
		timeout = time.Duration(d.Timeout * float64(time.Second))
	}
	t := &externalTool{peer: s.peer, approvals: s.conv.Approvals(), spec: toolset.Spec{Name: d.Name, Description: desc,
		Parameters: params, Source: "wire client", Timeout: timeout}}
	var remove []string
	if s.externals[d.Name] {
		remove = []string{d.Name}
	}
	if errs := ts.Replace(remove, t); len(errs) > 0 {
		delete(s.externals, d.Name)
		msg := errs[0].Error()
		if msg == "" {
			msg = "invalid schema"
		}
		return strings.TrimPrefix(msg, "tool "+d.Name+": ")
	}
	s.externals[d.Name] = true
	return ""
}
