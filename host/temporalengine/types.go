// Package temporalengine runs sessions on Temporal: the session is a
// workflow whose state is the history, the step counter and plan mode;
// each model request and each tool call is an activity. The activities
// run in a Temporal worker session, so a session's tool calls run on one
// worker, which opens the session with conversation.Open (the one
// assembly) and hosts its plugin processes; provider keys stay on the
// workers and never enter the workflow's history.
//
// A tool call is run at most once unless its tool is annotated read-only
// or idempotent: a side-effecting call whose worker stopped mid-call is
// answered "outcome unknown" and never repeated; a read-only one is run
// again on another worker. Tool calls and model requests heartbeat (a
// host timer, and the plugin's progress reports), so the death of a
// worker is noticed within the heartbeat timeout.
package temporalengine

import (
	"time"

	"github.com/kosong-host/kosong-host/host/approval"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/providers"
)

// Names of the workflow, its activities, update, query and signals as
// registered on the workers.
const (
	WorkflowName  = "kosong.Session"
	ActivityModel = "kosong.ModelRequest"
	ActivityTool  = "kosong.ToolCall"
	ActivityClose = "kosong.CloseSession"
	// UpdateTurn runs a turn; its result is a TurnOutcome.
	UpdateTurn = "turn"
	// QueryHistory answers the history.
	QueryHistory = "history"
	// SignalClose ends the session once no turn runs.
	SignalClose = "close"
	// SignalPlanMode turns plan mode on or off (a bool).
	SignalPlanMode = "plan_mode"
	// SignalCancelTurn cancels the running turn, as Ctrl-C does in process
	// (no effect when none runs).
	SignalCancelTurn = "cancel_turn"
)

// DefaultTaskQueue is the task queue of workers and sessions when none is given.
const DefaultTaskQueue = "kosong-host"

// DefaultHeartbeat is the heartbeat timeout of tool calls, model requests
// and worker sessions when the session's input gives none.
const DefaultHeartbeat = 20 * time.Second

// OutcomeUnknown answers a side-effecting tool call whose worker stopped
// while it ran; the call is not repeated.
const OutcomeUnknown = "outcome unknown: the worker running it stopped; the call was not repeated"

// MovedNote tells the model, before its next request, that the session
// went on on another worker.
const MovedNote = "The worker running this session stopped; the session goes on on another worker, whose plugins started afresh: background tasks and the plugins' state (started processes, open connections) are gone."

// SessionInput starts a session workflow.
type SessionInput struct {
	// WorkDir is the session's folder, on the workers.
	WorkDir string
	// Yolo approves every action; Unattended rejects those that need an
	// approval (unless Yolo) and leaves out the tools that ask the user
	// questions (one-shot runs, as in process); else approvals and
	// questions are asked of the session's clients (UpdateApprove,
	// UpdateAnswerQuestions), the workflow waiting with no process busy.
	Yolo       bool
	Unattended bool
	// PlanMode starts the session in plan mode.
	PlanMode bool
	// MaxStepsPerTurn bounds a turn (0: loop.DefaultMaxStepsPerTurn).
	MaxStepsPerTurn int
	// Retry is the retry policy of model requests (zero: the default).
	Retry providers.RetryPolicy
	// Heartbeat is the heartbeat timeout (0: DefaultHeartbeat).
	Heartbeat time.Duration
	// History is the conversation so far (a resumed session, or the
	// history carried to a new run).
	History []providers.Message
	// ContinueAfter is the number of workflow history events after which
	// the session continues as a new run once no turn runs (0:
	// DefaultContinueAfter); it also does when Temporal suggests it.
	ContinueAfter int
	// Carried is the state a run continued as new carries over.
	Carried *Carried `json:",omitempty"`
}

// DefaultContinueAfter is the number of workflow history events after
// which a session continues as a new run, well under Temporal's limits
// (51,200 events, 50 MB).
const DefaultContinueAfter = 10000

// Carried is the state a session carries into its next run (with its
// history and plan mode in SessionInput).
type Carried struct {
	Turns int
	Steps int
	// ForSession are the actions approved for the session.
	ForSession []string
	// Runs counts the runs before this one.
	Runs int
}

// ContinuedNote tells the model, before its first request in a run that
// continued an earlier one, that the plugins started afresh.
const ContinuedNote = "The session continued in a new workflow run (its history had grown long); its plugins started afresh: background tasks and the plugins' state (started processes, open connections) are gone."

// TurnOutcome sums up a turn.
type TurnOutcome struct {
	Steps     int
	Reason    loop.StopReason
	ModelStop providers.StopReason
	Usage     providers.Usage
	// Error is the error that ended the turn ("" for none).
	Error string
	// Workers counts the worker sessions the turn used (more than one
	// when a worker stopped).
	Workers int
	// Turn is the turn's number in the session (its feed: FeedID).
	Turn int `json:",omitempty"`
}

// SessionResult is what the workflow returns when it is closed.
type SessionResult struct {
	History []providers.Message
	Turns   int
	Steps   int
}

// OpenRequest is what a worker opens a session's conversation with.
type OpenRequest struct {
	WorkDir    string
	Yolo       bool
	Unattended bool
	// Questions answers the tools' questions through the workflow (set by
	// the worker; nil when the session is Unattended: the tools that ask
	// are left out, as in process).
	Questions approval.UserInput `json:"-"`
}

// ModelInput is one model request.
type ModelInput struct {
	// Session is the worker session's id: the worker's conversation of it.
	Session  string
	Open     OpenRequest
	PlanMode bool
	History  []providers.Message
	// Turn and Step place the request in the session (its turn's feed).
	Turn, Step int `json:",omitempty"`
}

// ModelOutput is the model's final message of a request; the deltas
// never enter the history.
type ModelOutput struct {
	Message providers.Message
	Usage   providers.Usage
	Stop    providers.StopReason
	// Repeatable names the tools of the message's calls that are annotated
	// read-only or idempotent: their calls may run again.
	Repeatable []string
}

// ToolInput is one tool call.
type ToolInput struct {
	Session  string
	Open     OpenRequest
	PlanMode bool
	Call     providers.ToolCall
	// Decided are the answers to the approvals the call asked so far;
	// ForSession the actions approved for the session.
	Decided    []Decided
	ForSession []string
	// Answered are the answers to the questions the call asked so far.
	Answered []approval.Answers `json:",omitempty"`
	// Turn and Step place the call in the session (its turn's feed).
	Turn, Step int `json:",omitempty"`
}

// ToolOutput is a tool call's result as its tool message.
type ToolOutput struct {
	Message providers.Message
	// Rejected: the call was rejected without feedback; the turn stops.
	Rejected bool
	// Asks is an approval the call needs: the call stopped at it and runs
	// again once it is answered.
	Asks *approval.Request
	// Questions are questions for the user the call asked: the call
	// stopped at them and runs again once they are answered.
	Questions *approval.QuestionRequest `json:",omitempty"`
}
