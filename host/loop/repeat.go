package loop

import (
	"fmt"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// The repeat guard, as in Kimi CLI: a call (same tool, same canonical
// arguments) made in consecutive steps gets a reminder appended to its tool
// message at the 3rd, 5th and 8th consecutive occurrence, each firmer than
// the last, and the turn is stopped at the repeatStop-th occurrence (that
// call is not run) with StopToolCallRepeat.
const (
	repeatNotice = 3
	repeatWarn   = 5
	repeatDead   = 8
	repeatStop   = 12
)

// maxReminderArgs bounds the arguments quoted in a reminder.
const maxReminderArgs = 300

// reminder is the repeat guard's text for the n-th consecutive occurrence
// of tc ("" when there is none at n).
func reminder(tc providers.ToolCall, n int) string {
	switch n {
	case repeatNotice:
		return "<system>You have made this same tool call, with the same arguments, several times in a row, and its result " +
			"does not change. Use the result you already have, or try a different approach.</system>"
	case repeatWarn:
		return fmt.Sprintf("<system>Warning: you have called `%s` %d times in a row with the same arguments: %s. "+
			"Repeating the call will not give a different result. Stop repeating it: change the arguments, use another "+
			"tool, or take a different approach.</system>", tc.Name, n, quoteArgs(tc.Arguments))
	case repeatDead:
		return fmt.Sprintf("<system>You are in a dead end: you have called `%s` %d times in a row with the same arguments "+
			"and it does not move you forward. You must not call a tool in your next response. Instead, tell the user what "+
			"you were trying to do, what you tried, and what blocks you, and wait for their instructions.</system>", tc.Name, n)
	}
	return ""
}

func quoteArgs(args string) string {
	s := canonicalJSON(args)
	if r := []rune(s); len(r) > maxReminderArgs {
		s = string(r[:maxReminderArgs]) + "…"
	}
	return s
}

// repeatStopped is the result of the call that stopped the turn.
func repeatStopped(tool string, n int) toolset.Result {
	msg := fmt.Sprintf("The call was not run: `%s` was called with the same arguments %d times in a row, so the turn was stopped. "+
		"Wait for the user's instructions.", tool, n)
	return toolset.Result{Kind: toolset.Failed, Message: msg, Brief: "Stopped: repeated call"}
}
