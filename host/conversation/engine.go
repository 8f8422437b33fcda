package conversation

import (
	"context"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// Engine runs the turns of one session. *Conversation runs them in this
// process (the default); a durable engine (host/temporalengine) runs them
// as a workflow whose workers each open the session with Open. A front
// end that needs no more than this drives either one the same way.
type Engine interface {
	// ID is the session id.
	ID() string
	// Turn runs one turn with the user's input.
	Turn(ctx context.Context, input string) (loop.TurnResult, error)
	// History is the conversation so far.
	History() []providers.Message
	// Close ends the session's use by this front end.
	Close()
}

var _ Engine = (*Conversation)(nil)

// System is the system prompt of the conversation's model ("" for a
// conversation made by New): an engine that runs the model requests
// itself sends it.
func (c *Conversation) System() string {
	if c.asm == nil {
		return ""
	}
	return c.asm.system
}
