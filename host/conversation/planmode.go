package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// Plan mode: the model explores with read-only tools only (the toolset
// offers and runs no other, see toolset.PlanTool) and presents its plan
// with ExitPlanMode, which leaves plan mode once the user approves the
// plan. The user turns it on and off (/plan, --plan, the ACP mode plan,
// wire set_plan_mode); the model enters it with EnterPlanMode.

// The tools of plan mode.
const (
	EnterPlanModeTool = "EnterPlanMode"
	ExitPlanModeTool  = "ExitPlanMode"
)

// SetPlanMode turns plan mode on or off; a change is observed as a
// loop.PlanModeChanged event. It reports whether it changed anything.
func (c *Conversation) SetPlanMode(on bool) bool {
	ts := c.parts.Toolset
	if ts == nil || !ts.SetPlanMode(on) {
		return false
	}
	c.parts.Events.Observe(loop.PlanModeChanged{On: on})
	return true
}

// PlanMode reports whether plan mode is on.
func (c *Conversation) PlanMode() bool {
	ts := c.parts.Toolset
	return ts != nil && ts.PlanMode()
}

// PlanTools are EnterPlanMode and ExitPlanMode for the conversation conv
// returns (called at each call: the conversation is built after its
// tools); approvals asks the user to approve a plan.
func PlanTools(conv func() *Conversation, approvals approval.Decider) []toolset.Tool {
	return []toolset.Tool{enterPlanTool{conv: conv}, exitPlanTool{conv: conv, approvals: approvals}}
}

type enterPlanTool struct{ conv func() *Conversation }

func (enterPlanTool) PlanModeTool() {}

func (enterPlanTool) Spec() toolset.Spec {
	return toolset.Spec{Name: EnterPlanModeTool, Source: "host", Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
		Description: "Enter plan mode before a change that needs design: multiple files, several possible approaches, or unclear requirements. " +
			"In plan mode only read-only tools are available: explore the code, then present the plan with ExitPlanMode for the user to approve before changing anything."}
}

func (t enterPlanTool) Call(context.Context, string, json.RawMessage) toolset.Result {
	c := t.conv()
	if c == nil {
		return toolset.Result{Kind: toolset.Failed, Message: "Plan mode is not supported"}
	}
	if !c.SetPlanMode(true) {
		return toolset.Result{Message: "Plan mode is already on.", Brief: "plan mode already on"}
	}
	return toolset.Result{Brief: "plan mode on", Output: []providers.ContentPart{providers.TextPart("Plan mode is on. Only read-only tools are available: explore, then call ExitPlanMode with the plan and 2-3 approaches for the user to choose from; nothing is changed before the user approves.")}}
}

type exitPlanTool struct {
	conv      func() *Conversation
	approvals approval.Decider
}

func (exitPlanTool) PlanModeTool() {}

// PlanOption is one approach ExitPlanMode offers.
type PlanOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

type exitPlanArgs struct {
	Plan    string       `json:"plan"`
	Options []PlanOption `json:"options"`
}

func (exitPlanTool) Spec() toolset.Spec {
	return toolset.Spec{Name: ExitPlanModeTool, Source: "host",
		Description: "Present the plan for the user's approval and leave plan mode once it is approved. Give the plan in Markdown and 2-3 approaches (options) the user chooses from; a rejected plan keeps plan mode on, with the user's feedback.",
		Parameters: json.RawMessage(`{"type":"object","required":["plan"],"properties":{` +
			`"plan":{"type":"string","description":"The plan, in Markdown."},` +
			`"options":{"type":"array","maxItems":3,"description":"2-3 approaches the user chooses from (used when there are at least 2).",` +
			`"items":{"type":"object","required":["label"],"properties":{"label":{"type":"string"},"description":{"type":"string"}}}}}}`)}
}

func (t exitPlanTool) Call(ctx context.Context, id string, raw json.RawMessage) toolset.Result {
	c := t.conv()
	if c == nil || t.approvals == nil {
		return toolset.Result{Kind: toolset.Failed, Message: "Plan mode is not supported"}
	}
	if !c.PlanMode() {
		return toolset.Result{Kind: toolset.Failed, Message: "Plan mode is not on; ExitPlanMode presents a plan made in plan mode."}
	}
	var a exitPlanArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return toolset.ParseError(err)
	}
	if strings.TrimSpace(a.Plan) == "" {
		return toolset.Result{Kind: toolset.Failed, Message: "ExitPlanMode needs the plan: plan is empty."}
	}
	seen := map[string]bool{}
	for i, o := range a.Options {
		l := strings.TrimSpace(o.Label)
		if l == "" || seen[l] {
			return toolset.Result{Kind: toolset.Failed, Message: fmt.Sprintf("ExitPlanMode: options[%d] needs a label of its own", i)}
		}
		seen[l] = true
	}
	text := PlanText(a.Plan, a.Options)
	data, _ := json.Marshal(map[string]string{"text": text})
	d, err := t.approvals.Decide(approval.WithForceAsk(ctx), approval.Request{ToolCallID: id, ToolName: ExitPlanModeTool,
		Action: "approve the plan and leave plan mode", Description: text,
		Display: []approval.Display{{Kind: "brief", Data: data}}})
	if err != nil {
		return toolset.Result{Kind: toolset.Failed, Message: "The plan was not approved: " + err.Error()}
	}
	if !d.Approved {
		msg := "The user rejected the plan; plan mode stays on. Revise the plan and present it again with ExitPlanMode."
		if d.Feedback != "" {
			msg += " The user says: " + d.Feedback
		}
		return toolset.Result{Kind: toolset.Rejected, Message: msg, Brief: "plan rejected"}
	}
	c.SetPlanMode(false)
	out := "The user approved the plan; plan mode is off and every tool is available again. Carry out the plan."
	if d.Feedback != "" {
		out += " The user says: " + d.Feedback
	}
	return toolset.Result{Brief: "plan approved", Output: []providers.ContentPart{providers.TextPart(out)}}
}

// PlanText is the plan as the user reads it for approval: the plan, then
// the approaches numbered.
func PlanText(plan string, options []PlanOption) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(plan))
	if len(options) >= 2 {
		b.WriteString("\n\nApproaches:")
		for i, o := range options {
			fmt.Fprintf(&b, "\n%d. %s", i+1, strings.TrimSpace(o.Label))
			if d := strings.TrimSpace(o.Description); d != "" {
				b.WriteString(": " + d)
			}
		}
	}
	return b.String()
}
