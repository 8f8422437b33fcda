package permission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/hooks"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// AnswerRule is the loop.ApprovalDecided answer of a request an allow rule
// approved.
const AnswerRule = "rule"

// Gate admits the tool calls of a toolset (toolset.Guard): deny rules
// first, then PreToolUse hooks, then ask and allow rules, which answer the
// call's approval requests through the Decider Gate wraps. It also fires
// PostToolUse and PostToolUseFailure hooks.
type Gate struct {
	rules atomic.Pointer[Set]
	hooks atomic.Pointer[hooks.Runner]
	obs   loop.Observer

	mu    sync.Mutex
	calls map[string]Effect // by tool call id: Allow (rule) or Ask (rule or hook)
	post  sync.WaitGroup
}

// NewGate returns a gate with these rules and hooks (either may be nil);
// obs receives PermissionDecided events (nil drops them).
func NewGate(rules *Set, h *hooks.Runner, obs loop.Observer) *Gate {
	if obs == nil {
		obs = loop.ObserverFunc(func(loop.Event) {})
	}
	g := &Gate{obs: obs, calls: map[string]Effect{}}
	g.SetRules(rules)
	g.hooks.Store(h)
	return g
}

// SetRules replaces the rules (an agent reload).
func (g *Gate) SetRules(s *Set) {
	if s == nil {
		s = &Set{}
	}
	g.rules.Store(s)
}

// SetHooks replaces the hooks (an agent reload).
func (g *Gate) SetHooks(h *hooks.Runner) { g.hooks.Store(h) }

// Hooks are the current hooks.
func (g *Gate) Hooks() *hooks.Runner { return g.hooks.Load() }

// Rules are the current rules.
func (g *Gate) Rules() *Set { return g.rules.Load() }

// ToolOf is what the rules know of a toolset tool.
func ToolOf(s toolset.Spec) Tool {
	return Tool{Name: s.Name, RuleArgument: s.RuleArgument, MCP: strings.HasPrefix(s.Source, "mcp server")}
}

// DeniedResult is what the model sees for a call a deny rule stops.
func DeniedResult(d Decision) toolset.Result {
	if d.Unproven != "" {
		return toolset.Result{Kind: toolset.Failed,
			Message: fmt.Sprintf("Permission denied: the command cannot be checked against the rule `%s` (permissions.deny in %s): %s. Write each command name as plain text (no variables, eval or sh -c of a variable, no arithmetic on variables), or ask the user.",
				d.Rule.Text, d.Rule.Where(), d.Unproven),
			Brief: "Denied: cannot check against " + d.Rule.Text}
	}
	return toolset.Result{Kind: toolset.Failed,
		Message: fmt.Sprintf("Permission denied: the rule `%s` (permissions.deny in %s) forbids this call. Do not try to get around it; ask the user if it is needed.",
			d.Rule.Text, d.Rule.Where()),
		Brief: "Denied by rule " + d.Rule.Text}
}

// Admit implements toolset.Guard.
func (g *Gate) Admit(ctx context.Context, c toolset.Call) *toolset.Result {
	d := g.rules.Load().Decide(ToolOf(c.Spec), c.Args)
	if d.Effect != None {
		g.obs.Observe(loop.PermissionDecided{ToolCallID: c.ID, ToolName: c.Spec.Name, Decision: string(d.Effect),
			Rule: d.Rule.Text, Where: d.Rule.Where(), Reason: d.Reason})
	}
	if d.Effect == Deny {
		r := DeniedResult(d)
		return &r
	}
	effect := d.Effect
	if h := g.hooks.Load(); h.Has(hooks.PreToolUse) {
		o := h.Fire(ctx, hooks.PreToolUse, c.Spec.Name, map[string]any{
			"tool_name": c.Spec.Name, "tool_input": json.RawMessage(c.Args), "tool_call_id": c.ID})
		switch o.Action {
		case hooks.ActionBlock:
			reason := o.Reason
			if reason == "" {
				reason = hooks.DefaultBlockReason
			}
			return &toolset.Result{Kind: toolset.Failed, Message: reason, Brief: "Hook blocked"}
		case hooks.ActionAsk:
			effect = Ask
		}
	}
	if effect == Allow || effect == Ask {
		g.mu.Lock()
		g.calls[c.ID] = effect
		g.mu.Unlock()
	}
	return nil
}

// Done implements toolset.Guard: PostToolUse (or PostToolUseFailure for a
// tool that failed to run) fires in the background.
func (g *Gate) Done(ctx context.Context, c toolset.Call, r toolset.Result) {
	g.mu.Lock()
	delete(g.calls, c.ID)
	g.mu.Unlock()
	h := g.hooks.Load()
	event := hooks.PostToolUse
	input := map[string]any{"tool_name": c.Spec.Name, "tool_input": json.RawMessage(c.Args), "tool_call_id": c.ID}
	if r.Runtime {
		event = hooks.PostToolUseFailure
		input["error"] = r.Message
	} else {
		out := r.OutputText()
		if r.IsError() && out == "" {
			out = r.Message
		}
		if len(out) > 2000 {
			out = out[:2000]
		}
		input["tool_output"] = out
	}
	if !h.Has(event) {
		return
	}
	g.post.Add(1)
	go func() {
		defer g.post.Done()
		h.Fire(context.WithoutCancel(ctx), event, c.Spec.Name, input)
	}()
}

// Wait waits for the PostToolUse hooks still running.
func (g *Gate) Wait() { g.post.Wait() }

// effectOf is the rule effect recorded for a running call.
func (g *Gate) effectOf(id string) Effect {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.calls[id]
}

// Decider wraps the run's decider: a request of a call an allow rule
// matched is approved (reported to obs with answer "rule"); one an ask rule
// or hook matched is asked even if its action was approved for the
// session; the others go to next as before. --yolo still approves ask
// calls; unattended runs still reject them.
func (g *Gate) Decider(next approval.Decider) approval.Decider {
	return approval.DeciderFunc(func(ctx context.Context, req approval.Request) (approval.Decision, error) {
		switch g.effectOf(req.ToolCallID) {
		case Allow:
			g.obs.Observe(loop.ApprovalDecided{ToolCallID: req.ToolCallID, Plugin: req.Plugin, ToolName: req.ToolName, Action: req.Action,
				Description: req.Description, Approved: true, Answer: AnswerRule})
			return approval.Decision{Approved: true}, nil
		case Ask:
			ctx = approval.WithForceAsk(ctx)
		}
		return next.Decide(ctx, req)
	})
}
