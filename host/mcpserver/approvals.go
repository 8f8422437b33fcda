package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/approval"
)

// The answers of the approval elicitation.
const (
	DecisionApprove           = "approve"
	DecisionApproveForSession = "approve for session"
	DecisionReject            = "reject"
)

// ApprovalSchema is the form of the approval elicitation.
var ApprovalSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"decision":{"type":"string","title":"Decision","enum":["approve","approve for session","reject"],"default":"approve"},` +
	`"feedback":{"type":"string","title":"Feedback","description":"Why you reject it, for the model (optional)"}},` +
	`"required":["decision"]}`)

// Approvals is the approval.Decider of an agent whose tools are served over
// MCP. With yolo, every action is approved. Otherwise a client that
// supports elicitation is asked (approve, approve for session — remembered
// per MCP session and action —, or reject with optional feedback; declining
// or cancelling the form rejects); for a client that does not, the action
// is not done and the result says so (NoElicitationMessage).
type Approvals struct {
	yolo bool

	mu       sync.Mutex
	calls    map[string]*call
	sessions map[*mcp.ServerSession]map[string]bool
}

type call struct {
	ctx     context.Context
	session *mcp.ServerSession
	unasked bool // an approval was refused because the client cannot be asked
}

// NoElicitationMessage is the result of a call whose approval could not be
// asked: the client does not support elicitation.
const NoElicitationMessage = "The tool call needs the user's approval, and this MCP client cannot ask for it " +
	"(it does not support elicitation), so it was not run. Use an MCP client that supports elicitation, " +
	"or start `kosong-host mcp serve` with --yolo to approve every action."

// NewApprovals returns the decider to load the agent with.
func NewApprovals(yolo bool) *Approvals {
	return &Approvals{yolo: yolo, calls: map[string]*call{}, sessions: map[*mcp.ServerSession]map[string]bool{}}
}

func (a *Approvals) begin(ctx context.Context, id string, ss *mcp.ServerSession) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls[id] = &call{ctx: ctx, session: ss}
}

// end forgets the call and reports whether an approval was refused because
// the client cannot be asked.
func (a *Approvals) end(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.calls[id]
	delete(a.calls, id)
	return c != nil && c.unasked
}

// Decide answers a request of a tool call served over MCP.
func (a *Approvals) Decide(ctx context.Context, req approval.Request) (approval.Decision, error) {
	if a.yolo {
		return approval.Decision{Approved: true}, nil
	}
	a.mu.Lock()
	c := a.calls[req.ToolCallID]
	approved := c != nil && a.sessions[c.session][req.SessionKey()]
	unasked := c != nil && !approved && !canElicit(c.session)
	if unasked {
		c.unasked = true
	}
	a.mu.Unlock()
	switch {
	case c == nil:
		return approval.Decision{}, fmt.Errorf("approval requested with no MCP tool call in progress (tool call id %q)", req.ToolCallID)
	case approved:
		return approval.Decision{Approved: true}, nil
	case unasked:
		return approval.Decision{Feedback: NoElicitationMessage}, nil
	}
	// Stop asking when the MCP call ends, as well as when the tool stops.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	res, err := c.session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: elicitMessage(req), RequestedSchema: ApprovalSchema})
	if err != nil {
		return approval.Decision{}, fmt.Errorf("ask the MCP client: %w", err)
	}
	if res.Action != "accept" {
		return approval.Decision{}, nil
	}
	decision, _ := res.Content["decision"].(string)
	feedback, _ := res.Content["feedback"].(string)
	switch decision {
	case DecisionApprove, "":
		return approval.Decision{Approved: true}, nil
	case DecisionApproveForSession:
		a.rememberForSession(c.session, req.SessionKey())
		return approval.Decision{Approved: true}, nil
	}
	return approval.Decision{Feedback: strings.TrimSpace(feedback)}, nil
}

// rememberForSession approves key (approval.Request.SessionKey: plugin,
// tool and action) for the rest of ss.
func (a *Approvals) rememberForSession(ss *mcp.ServerSession, key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.sessions[ss]
	if m == nil {
		m = map[string]bool{}
		a.sessions[ss] = m
		go func() {
			_ = ss.Wait()
			a.mu.Lock()
			delete(a.sessions, ss)
			a.mu.Unlock()
		}()
	}
	m[key] = true
}

func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// elicitMessage tells the user what is asked, as the REPL does.
func elicitMessage(req approval.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s wants approval to %s.", req.ToolName, req.Action)
	if req.Plugin != "" {
		fmt.Fprintf(&b, " (plugin %s)", req.Plugin)
	}
	if req.Description != "" {
		if req.Plugin != "" {
			fmt.Fprintf(&b, "\nplugin %s says:", req.Plugin)
		}
		fmt.Fprintf(&b, "\n%s", req.Description)
	}
	edited := map[string]bool{}
	for _, d := range req.Display {
		switch d.Kind {
		case "brief":
			var s string
			if json.Unmarshal(d.Data, &s) == nil && s != "" {
				fmt.Fprintf(&b, "\n%s", s)
			}
		case "diff":
			var v struct {
				Path string `json:"path"`
			}
			// A large edit comes as one block a hunk: its file is named once.
			if json.Unmarshal(d.Data, &v) == nil && v.Path != "" && !edited[v.Path] {
				edited[v.Path] = true
				fmt.Fprintf(&b, "\nedit %s", v.Path)
			}
		}
	}
	return b.String()
}
