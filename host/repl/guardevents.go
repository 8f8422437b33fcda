package repl

import (
	"fmt"

	"github.com/kosong-host/kosong-host/host/loop"
)

// guardText is the text form of those events ("" for nothing to show):
// hook blocks and warnings, permission decisions, reloads.
func guardText(e loop.Event) (line string, warn bool) {
	switch e := e.(type) {
	case loop.HookRan:
		switch {
		case e.Warning != "":
			return "! " + e.Warning, true
		case e.Action == "block":
			return fmt.Sprintf("  ⛔ %s hook blocked %s: %s", e.Event, e.Target, e.Reason), false
		}
	case loop.PermissionDecided:
		return fmt.Sprintf("  ⚖ %s: %s by rule %s (%s)", e.ToolName, e.Decision, e.Rule, e.Where), false
	case loop.AgentReloaded:
		if e.Err != nil {
			return fmt.Sprintf("! reload refused, the tools are unchanged: %v", e.Err), true
		}
		return fmt.Sprintf("Reloaded the agent: started %v, stopped %v, kept %v", nonNil(e.Started), nonNil(e.Stopped), nonNil(e.Kept)), false
	}
	return "", false
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
