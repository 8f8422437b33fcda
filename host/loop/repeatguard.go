package loop

import "github.com/kosong-host/kosong-host/providers"

// RepeatGuard applies the repeat guard's rule (repeat.go) to the steps of
// a turn run by another engine (the Temporal workflow), without a clock
// or any other source of nondeterminism: given the same calls it gives
// the same verdicts. The zero value starts a turn.
type RepeatGuard struct {
	// prev counts, per call key, the consecutive steps ending with the
	// last one that made the call.
	prev map[string]int
}

// RepeatVerdict is the guard's verdict on one call of a step.
type RepeatVerdict struct {
	// Same is the index of the identical earlier call of the step whose
	// result this one shares (it is not run); -1 for none.
	Same int
	// Repeat counts the consecutive steps, this one included, that made
	// the call (0 for a truncated call).
	Repeat int
	// Reminder is the text appended to the call's tool message ("" none).
	Reminder string
	// Stop: the call is not run (its result is RepeatStopped) and the
	// turn stops after this step with StopToolCallRepeat.
	Stop bool
}

// Step returns the verdicts on a step's calls, in call order, and counts
// the step.
func (g *RepeatGuard) Step(calls []providers.ToolCall) []RepeatVerdict {
	next := map[string]int{}
	first := map[string]int{}
	out := make([]RepeatVerdict, len(calls))
	for i, tc := range calls {
		out[i].Same = -1
		if tc.Truncated {
			continue
		}
		k := callKey(tc)
		if j, ok := first[k]; ok {
			out[i] = out[j]
			out[i].Same = j
			continue
		}
		first[k] = i
		n := g.prev[k] + 1
		next[k] = n
		out[i] = RepeatVerdict{Same: -1, Repeat: n, Reminder: reminder(tc, n), Stop: n >= repeatStop}
	}
	g.prev = next
	return out
}

// RepeatStopped is the tool message of a call the guard stopped.
func RepeatStopped(tc providers.ToolCall, n int) providers.Message {
	r := repeatStopped(tc.Name, n)
	r.ToolCallID = tc.ID
	return r.ToolMessage()
}
