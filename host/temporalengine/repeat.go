package temporalengine

import (
	"go.temporal.io/sdk/workflow"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// repeatGuardVersion marks the runs whose turns apply the repeat guard
// (workflow.GetVersion): a run recorded before it replays without.
const repeatGuardVersion = "repeat-guard"

// verdicts are the repeat guard's verdicts on a step's calls (nil: the
// guard is off).
type verdicts []loop.RepeatVerdict

// newGuard is a turn's repeat guard: the in-process loop's rule
// (loop.RepeatGuard), nil in a run recorded without it.
func newGuard(ctx workflow.Context) *loop.RepeatGuard {
	if workflow.GetVersion(ctx, repeatGuardVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	return &loop.RepeatGuard{}
}

// judge returns the guard's verdicts on the step's calls.
func judge(g *loop.RepeatGuard, calls []providers.ToolCall) verdicts {
	if g == nil {
		return nil
	}
	return g.Step(calls)
}

// skip says whether call i is not run: stopped by the guard (msg is its
// result) or identical to an earlier call of the step (it shares its
// result, filled in by apply).
func (v verdicts) skip(i int, c providers.ToolCall) (msg providers.Message, skip bool) {
	if v == nil {
		return providers.Message{}, false
	}
	switch {
	case v[i].Same >= 0:
		return providers.Message{}, true
	case v[i].Stop:
		return loop.RepeatStopped(c, v[i].Repeat), true
	}
	return providers.Message{}, false
}

// apply gives the identical calls their earlier call's result and
// appends the reminders, as the in-process loop does.
func (v verdicts) apply(calls []providers.ToolCall, msgs []providers.Message) []providers.Message {
	if v == nil {
		return msgs
	}
	for i := range msgs {
		if j := v[i].Same; j >= 0 {
			m := msgs[j]
			m.ToolCallID = calls[i].ID
			m.Content = append([]providers.ContentPart(nil), msgs[j].Content...)
			msgs[i] = m
		}
	}
	for i := range msgs {
		if v[i].Reminder != "" {
			msgs[i].Content = append(msgs[i].Content, providers.TextPart(v[i].Reminder))
		}
	}
	return msgs
}

// stopped: the guard stops the turn after this step.
func (v verdicts) stopped() bool {
	for _, x := range v {
		if x.Stop {
			return true
		}
	}
	return false
}
