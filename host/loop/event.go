package loop

import (
	"time"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// Event is something a front end shows: one of the types below. The loop
// emits every event but ApprovalDecided, which the front end's approval
// decider emits itself (the loop knows nothing of approvals).
type Event interface{ event() }

// Observer receives the loop's events. The loop calls Observe synchronously,
// from the goroutine running Turn, so events of one turn arrive in order;
// Observe should return quickly.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Event)

// Observe calls f.
func (f ObserverFunc) Observe(e Event) { f(e) }

// StepStarted: an attempt at a step begins (the model is asked).
type StepStarted struct {
	Step    int
	Attempt int
}

// TextDelta is a piece of assistant text, as streamed.
type TextDelta struct {
	Step int
	Text string
}

// ReasoningDelta is a piece of the model's reasoning, as streamed.
type ReasoningDelta struct {
	Step int
	Text string
}

// ToolCallStarted: a tool call arrived and was handed to the toolset.
// Duplicate marks a call identical to an earlier one of the same step; it
// is not run again and gets that call's result. A call with
// Call.Truncated set was cut off by the output limit and is not run: its
// result says so.
type ToolCallStarted struct {
	Step      int
	Call      providers.ToolCall
	Duplicate bool
}

// ToolCallFinished: a tool call's result is in. Repeat counts the
// consecutive steps (this one included) that made the same call; Reminder
// is the repeat guard's text appended to the result the model sees ("" for
// none). Cancelled marks a call that was cancelled on the way (the user
// interrupted, or the provider failed for good): its Result says so, and
// that is what the model sees.
type ToolCallFinished struct {
	Step      int
	Call      providers.ToolCall
	Result    toolset.Result
	Duration  time.Duration
	Repeat    int
	Cancelled bool
	Reminder  string
}

// UsageReported is the token usage of one model response. ContextTokens
// is the size of the context after it (its input and output tokens);
// MaxContextTokens the model's context window (0: unknown).
type UsageReported struct {
	Step  int
	Usage providers.Usage
	// CostUSD is its cost at the model's prices; Priced says there are
	// prices.
	CostUSD          float64
	Priced           bool
	ContextTokens    int64
	MaxContextTokens int64
}

// StepRetried: an attempt failed with a retryable error; the step is run
// again after Delay. Attempt is the attempt about to be made. Kept are the
// calls of the failed attempt that ran: they entered the history with
// their results and the text streamed before them, and the next attempt
// continues from there; they are not run again. With none kept, the failed
// attempt left no trace.
type StepRetried struct {
	Step        int
	Attempt     int
	MaxAttempts int
	Delay       time.Duration
	Err         error
	Kept        []providers.ToolCall
}

// StepInterrupted: the turn was cancelled (Ctrl-C) during a step. The step
// entered the history as it was: its Text so far and its Calls, each with
// its real result if it had finished, else one saying it was interrupted.
type StepInterrupted struct {
	Step  int
	Calls []providers.ToolCall
	Text  string
}

// ResponseStopped is why the model stopped a response, as the provider
// reported it. With providers.StopMaxTokens the response was cut off by the
// output limit; Truncated are its calls whose arguments were cut off (not
// run).
type ResponseStopped struct {
	Step      int
	Reason    providers.StopReason
	Truncated []providers.ToolCall
}

// ApprovalDecided is an approval request and its answer. Answer says who
// decided: "yolo", "unattended", "user" or "session" (approved earlier for
// the session). ForSession: the user approved the action for the rest of
// the session. Waited is how long the user took to answer (0 when nobody
// was asked); it is part of the call's ToolCallFinished.Duration.
type ApprovalDecided struct {
	ToolCallID string
	// Plugin is who asked (approval.Request.Plugin); ToolName is the tool
	// of the call, as the host knows it.
	Plugin      string
	ToolName    string
	Action      string
	Description string
	Approved    bool
	Feedback    string
	Answer      string
	ForSession  bool
	Waited      time.Duration
}

// ToolProgress is a progress report of a running tool call, from tools that
// report progress (MCP servers). Total is 0 when unknown. It is emitted by
// the tool's source, not by the loop, from any goroutine.
type ToolProgress struct {
	ToolCallID string
	ToolName   string
	Progress   float64
	Total      float64
	Message    string
}

// TurnFailed is the error that ended a turn (not emitted on cancellation).
type TurnFailed struct {
	Err error
}

// TurnEnded closes every turn. Err is the error that ended it, if any;
// ModelStop is why the model stopped its last response ("" if unknown).
type TurnEnded struct {
	Steps int
	Usage providers.Usage
	// CostUSD is the turn's cost at the model's prices; Priced says
	// there are prices.
	CostUSD   float64
	Priced    bool
	Reason    StopReason
	ModelStop providers.StopReason
	Err       error
}

// HookRan is one run of a user's hook (host/hooks), emitted by the hook
// runner, from any goroutine. Action is allow, block or ask; Warning says
// why a failed hook was taken as allow.
type HookRan struct {
	Event    string
	Target   string
	Command  string
	Action   string
	Reason   string
	ExitCode int
	Duration time.Duration
	Warning  string
}

// PermissionDecided is a permission rule deciding a tool call
// (host/permission), emitted before the call runs: Decision is allow, ask
// or deny; Rule the rule as written and Where its file and line.
type PermissionDecided struct {
	ToolCallID string
	ToolName   string
	Decision   string
	Rule       string
	Where      string
	Reason     string
}

// AgentReloaded: the agent's toolset was reloaded (host/agent.Reload).
// Err is set when the new spec was refused (the old toolset stays).
type AgentReloaded struct {
	Started, Stopped, Kept []string
	Tools                  []string
	Err                    error
}

// SubagentEvent is an event of a subagent's own loop, started by the
// Agent call ParentToolCallID: SubagentType names the subagent, AgentID
// this run of it.
type SubagentEvent struct {
	ParentToolCallID string
	AgentID          string
	SubagentType     string
	Event            Event
}

func (SubagentEvent) event()     {}
func (HookRan) event()           {}
func (PermissionDecided) event() {}
func (AgentReloaded) event()     {}
func (StepStarted) event()       {}
func (TextDelta) event()         {}
func (ReasoningDelta) event()    {}
func (ToolCallStarted) event()   {}
func (ToolCallFinished) event()  {}
func (UsageReported) event()     {}
func (StepRetried) event()       {}
func (StepInterrupted) event()   {}
func (ResponseStopped) event()   {}
func (ApprovalDecided) event()   {}
func (ToolProgress) event()      {}
func (TurnFailed) event()        {}
func (TurnEnded) event()         {}
