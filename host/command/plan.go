package command

import (
	"context"
	"strings"
)

// runPlan turns plan mode on or off: /plan toggles it, /plan on and
// /plan off set it.
func runPlan(_ context.Context, e Env, arg string) {
	on := !e.Conv.PlanMode()
	switch strings.ToLower(arg) {
	case "":
	case "on":
		on = true
	case "off":
		on = false
	default:
		e.say("error: /plan takes on or off, not %q", arg)
		return
	}
	e.Conv.SetPlanMode(on)
	if on {
		e.say("Plan mode on: the model explores with read-only tools and presents a plan for approval before changing anything (/plan again to leave).")
	} else {
		e.say("Plan mode off: every tool is available.")
	}
}
