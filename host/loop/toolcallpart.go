package loop

import (
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

// PartInterval is the least time between two ToolCallPart events of one
// call: fragments that arrive sooner are held and go out together in the
// next part, so a model streaming thousands of tiny fragments makes at
// most one event per PartInterval per call (and one more with the rest
// when the call is complete).
const PartInterval = 50 * time.Millisecond

// ToolCallPart is a piece of a tool call as the model streams it, before
// the call is complete: ToolCallStarted, with the whole call, follows the
// call's parts. The first part of a call announces it (its ArgumentsPart
// may be empty); the ArgumentsPart of a call's parts, concatenated in
// order, are the call's arguments. A call whose response fails before the
// call is complete gets parts but never starts. Providers that do not
// stream calls (the scripted one) send none.
type ToolCallPart struct {
	Step          int
	ToolCallID    string
	ToolName      string
	ArgumentsPart string
}

func (ToolCallPart) event() {}

// partBuffer turns a step's providers.ToolCallPart into ToolCallPart
// events, at most one per PartInterval per call.
type partBuffer struct {
	step  int
	now   func() time.Time
	calls map[string]*heldPart
}

type heldPart struct {
	name string
	held strings.Builder
	last time.Time
}

func newPartBuffer(step int) *partBuffer {
	return &partBuffer{step: step, now: time.Now, calls: map[string]*heldPart{}}
}

// add takes a provider's part and says whether to emit an event now: the
// first part of a call at once, later ones once PartInterval has passed
// since the last event of that call.
func (b *partBuffer) add(p providers.ToolCallPart) (ToolCallPart, bool) {
	now := b.now()
	h, ok := b.calls[p.ID]
	if !ok {
		b.calls[p.ID] = &heldPart{name: p.Name, last: now}
		return ToolCallPart{Step: b.step, ToolCallID: p.ID, ToolName: p.Name, ArgumentsPart: p.Arguments}, true
	}
	h.held.WriteString(p.Arguments)
	if now.Sub(h.last) < PartInterval || h.held.Len() == 0 {
		return ToolCallPart{}, false
	}
	h.last = now
	return b.take(p.ID, h), true
}

// flush is the rest held for call id, once the call is complete; false
// when nothing is held.
func (b *partBuffer) flush(id string) (ToolCallPart, bool) {
	h, ok := b.calls[id]
	if !ok || h.held.Len() == 0 {
		return ToolCallPart{}, false
	}
	return b.take(id, h), true
}

func (b *partBuffer) take(id string, h *heldPart) ToolCallPart {
	e := ToolCallPart{Step: b.step, ToolCallID: id, ToolName: h.name, ArgumentsPart: h.held.String()}
	h.held.Reset()
	return e
}
