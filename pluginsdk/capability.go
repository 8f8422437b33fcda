package pluginsdk

import (
	"context"
	"encoding/json"
	"time"
)

// Decision is the user's answer to an approval request.
type Decision struct {
	Approved bool
	// Feedback is the user's feedback when rejecting; it may be empty.
	Feedback string
}

// Approval asks the user to approve an action. The host may answer at once
// (yolo, approved for the session) or ask the user. It must be called while
// a tool call is running (with the ctx given to Call).
type Approval interface {
	Request(ctx context.Context, action, description string, display ...DisplayBlock) (Decision, error)
}

// Shell names the user's shell.
type Shell struct {
	Name string // e.g. "bash"
	Path string // e.g. "/bin/bash"
}

// Environment describes the machine the host runs on.
type Environment interface {
	OS() string
	Shell() Shell
	WorkDir() string
	Now() time.Time
}

// Session describes the host's session.
type Session interface {
	ID() string
	WorkDir() string
	// StateDir is a directory reserved for this plugin in this session; it
	// survives a plugin restart.
	StateDir() string
}

// Config is the tool's `config` block from agent.yaml.
type Config interface {
	// Raw is the block as JSON; nil when none was given.
	Raw() json.RawMessage
	// Decode decodes the block into v; it leaves v untouched when none was given.
	Decode(v any) error
}

// Progress reports how far a running call has got: done out of total (0
// when unknown), in the tool's own unit, with an optional message. The host
// shows it to the user (as it shows MCP progress) and restarts the call's
// timeout clock, so a long call that keeps reporting progress is not timed
// out. It must be called while a tool call is running (with the ctx given to
// Call). On a host that does not offer progress, reports are dropped.
type Progress interface {
	Report(ctx context.Context, done, total float64, message string) error
}
