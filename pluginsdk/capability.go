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

// QuestionOption is one answer the user may pick.
type QuestionOption struct {
	Label       string
	Description string
}

// Question is one question for the user: a short Header (at most 12
// characters), 2-4 Options, and whether several may be picked.
type Question struct {
	Question    string
	Header      string
	Options     []QuestionOption
	MultiSelect bool
}

// Answers are the user's answers by question text: the chosen label, the
// labels of a multi-select question joined with ", ", or the user's own
// text. Dismissed says the user closed the questions without answering.
type Answers struct {
	Answers   map[string]string
	Dismissed bool
}

// UserInput asks the user questions. The host offers it only where someone
// can answer (an interactive session, a client that supports questions); a
// tool whose constructor asks for it elsewhere is skipped at load, with the
// reason. It must be called while a tool call is running (with the ctx
// given to Call).
type UserInput interface {
	Ask(ctx context.Context, questions []Question) (Answers, error)
}

// The model capabilities a Model may report.
const (
	ModelImageIn  = "image_in"
	ModelVideoIn  = "video_in"
	ModelThinking = "thinking"
)

// Model describes the model the session runs. A tool whose constructor asks
// for it on a host that does not say (an older host) is skipped at load.
type Model interface {
	// Provider is the provider's name (e.g. "openai"), Name the model's.
	Provider() string
	Name() string
	// Alias is the configuration file's model alias; "" when none.
	Alias() string
	// Capabilities are the model's capabilities (ModelImageIn...), when
	// CapabilitiesKnown.
	Capabilities() []string
	// CapabilitiesKnown says the configuration declares the capabilities;
	// otherwise nothing is known about them.
	CapabilitiesKnown() bool
	// Has reports whether the model is known to have the capability.
	Has(capability string) bool
	// MaxContextSize is the context window in tokens; 0 when unknown.
	MaxContextSize() int64
}

// Editor reaches the files of the user's editor: its buffers (unsaved
// changes seen) and edits the user can undo there. The host offers it when
// its client lends them (an ACP editor advertising fs.readTextFile and
// fs.writeTextFile); a tool that takes it gets nil elsewhere, and then
// reads and writes the disk. Paths are absolute. It must be called while a
// tool call is running (with the ctx given to Call), after the call's
// approval.
type Editor interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// TerminalResult is how a command in the editor's terminal ended: its
// output (Truncated: its start was dropped), its exit code, or -1 and the
// Signal that ended it.
type TerminalResult struct {
	Output    string
	Truncated bool
	ExitCode  int
	Signal    string
}

// Terminal runs commands in the user's editor's terminal, where the user
// watches them. The host offers it when its client lends one (an ACP
// editor advertising terminal); a tool that takes it gets nil elsewhere,
// and runs commands itself. Run ends the command when ctx ends. It must be
// called while a tool call is running (with the ctx given to Call), after
// the call's approval.
type Terminal interface {
	Run(ctx context.Context, command string, args []string, cwd string, outputByteLimit int64) (TerminalResult, error)
}
