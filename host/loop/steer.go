package loop

import "github.com/kosong-host/kosong-host/providers"

// Steered: user messages sent into the running turn (Steer) entered the
// history at a step boundary; the model sees them in its next request.
type Steered struct {
	Step  int // the step just finished
	Texts []string
}

func (Steered) event() {}

// SteeredNote starts a steered message, as a part of its own: the model
// learns the user wrote it during the turn, and what lists a session's
// turns (sessions, /undo) does not take it for the start of one.
const SteeredNote = "<system>The user sent this while you were working; take it into account.</system>\n"

// steering holds the messages steered into the running turn; l.mu guards it.
type steering struct {
	open    bool // a turn runs and takes steered messages
	pending []string
}

// Steer sends text into the running turn as a user message: it enters the
// history at the next step boundary (after the step's tool calls have
// their results) and the model sees it before its next request; a turn
// that was about to end goes on with one more step for it. It returns
// false, keeping nothing, when no turn runs (or it is ending): the caller
// sends text as a turn of its own. Safe to call from any goroutine; front
// ends (terminal, wire, ACP) share this one mechanism.
func (l *Loop) Steer(text string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.steer.open || text == "" {
		return false
	}
	l.steer.pending = append(l.steer.pending, text)
	return true
}

// openSteering starts taking steered messages, for a turn.
func (l *Loop) openSteering() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steer = steering{open: true}
}

// closeSteering stops taking steered messages and returns those not
// delivered (the turn ended on an error or was interrupted first).
func (l *Loop) closeSteering() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	left := l.steer.pending
	l.steer = steering{}
	return left
}

// deliverSteered appends the messages steered so far to the history, each
// a user message, and reports whether there were any. With last set (the
// turn would end here) and none pending, steering closes in the same
// critical section, so no message is accepted that no step would see.
func (l *Loop) deliverSteered(step int, last bool) bool {
	l.mu.Lock()
	texts := l.steer.pending
	l.steer.pending = nil
	if len(texts) == 0 && last {
		l.steer.open = false
	}
	for _, t := range texts {
		l.history = append(l.history, providers.Message{Role: providers.RoleUser,
			Content: []providers.ContentPart{providers.TextPart(SteeredNote), providers.TextPart(t)}})
	}
	l.mu.Unlock()
	if len(texts) == 0 {
		return false
	}
	l.emit(Steered{Step: step, Texts: texts})
	return true
}
