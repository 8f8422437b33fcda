package toolset

import (
	"context"
	"fmt"

	"github.com/kosong-host/kosong-host/providers"
)

// Plan mode: while it is on, the model is offered only the tools declared
// read-only (AnnotationsOf(t).IsReadOnly()) and the tools of plan mode
// itself (PlanTool); a call of any other tool is refused with
// PlanModeRefusal and does not run.

// PlanTool is a tool that works in plan mode whatever its annotations
// (entering and leaving plan mode).
type PlanTool interface {
	Tool
	PlanModeTool()
}

// SetPlanMode turns plan mode on or off; it reports whether that changed
// it.
func (ts *Toolset) SetPlanMode(on bool) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	changed := ts.plan != on
	ts.plan = on
	return changed
}

// PlanMode reports whether plan mode is on.
func (ts *Toolset) PlanMode() bool {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	return ts.plan
}

// inPlan says whether t works in plan mode.
func inPlan(t Tool) bool {
	if _, ok := t.(PlanTool); ok {
		return true
	}
	return AnnotationsOf(t).IsReadOnly()
}

// planDefsLocked are the tools offered in plan mode; ts.mu is held.
func (ts *Toolset) planDefsLocked() []providers.ToolDef {
	var out []providers.ToolDef
	for _, name := range ts.order {
		e := ts.tools[name]
		if inPlan(e.tool) {
			out = append(out, providers.ToolDef{Name: e.modelName, Description: e.spec.Description, Parameters: e.spec.Parameters})
		}
	}
	return out
}

// PlanModeRefusal is the result of a call of a tool that is not available
// in plan mode.
func PlanModeRefusal(name string) Result {
	return Result{Kind: Failed, Brief: "not available in plan mode", Message: fmt.Sprintf(
		"%s is not available in plan mode. Only read-only tools can be used while planning: explore, then present the plan with ExitPlanMode; the user approves it before anything is changed.", name)}
}

// planAdmit refuses e's call in plan mode; nil when it may run.
func (ts *Toolset) planAdmit(_ context.Context, e *entry) *Result {
	ts.mu.RLock()
	on := ts.plan
	ts.mu.RUnlock()
	if !on || inPlan(e.tool) {
		return nil
	}
	r := PlanModeRefusal(e.modelName)
	return &r
}
