package pluginrpc

import (
	"encoding/json"
	"time"
)

// ToolSpec describes one tool, as Describe reports it.
type ToolSpec struct {
	Name        string
	Description string
	// ParametersSchema is the JSON Schema of the arguments.
	ParametersSchema json.RawMessage
	// Capabilities the tool's constructor needs, by wire name.
	Capabilities []string
	// DefaultTimeout is the tool's default call timeout; 0 means the host's.
	DefaultTimeout time.Duration
	// RuleArgument is the argument permission rules match ("" for none).
	RuleArgument string
	// Annotations say what the tool does; all unknown when it declares none.
	Annotations Annotations
}

// Annotations say what a tool does, as its author declares it; a nil field
// is unknown (binaries built before annotations declare none).
type Annotations struct {
	// ReadOnly: the tool does not change its environment.
	ReadOnly *bool
	// Destructive: the tool may destroy or overwrite data.
	Destructive *bool
	// Idempotent: a repeated call with the same arguments has no further
	// effect.
	Idempotent *bool
	// OpenWorld: the tool reaches outside the machine.
	OpenWorld *bool
}

// Known reports whether any annotation is declared.
func (a Annotations) Known() bool {
	return a.ReadOnly != nil || a.Destructive != nil || a.Idempotent != nil || a.OpenWorld != nil
}

// Description is a binary's answer to Describe.
type Description struct {
	// SDKVersion is the version of the SDK the binary was built with.
	SDKVersion string
	Tools      []ToolSpec
	// SharedLoads says the binary serves several loads in one process,
	// each named by its LoadRequest.LoadID: a host may share the process
	// between its sessions.
	SharedLoads bool
}

// Session is the host's session, as one plugin sees it.
type Session struct {
	ID      string
	WorkDir string
	// StateDir is a directory reserved for this plugin in this session.
	StateDir string
}

// LoadRequest asks a plugin to construct its tools.
type LoadRequest struct {
	// CapabilityBrokerID is the broker id of the host's capability server.
	CapabilityBrokerID uint32
	// Capabilities the host offers, by wire name.
	Capabilities []string
	Session      Session
	// Tools to construct; empty means all.
	Tools []string
	// ToolConfigs holds each tool's config block as JSON text.
	ToolConfigs map[string]string
	// LoadID names the load among the process's loads (see
	// Description.SharedLoads); a Load with the id of an earlier one
	// replaces it. "" is the process's one load.
	LoadID string
}

// LoadStatus is the outcome of constructing one tool.
type LoadStatus int

// The load outcomes.
const (
	StatusUnspecified LoadStatus = iota
	StatusLoaded
	StatusSkipped
	StatusFailed
)

func (s LoadStatus) String() string {
	switch s {
	case StatusLoaded:
		return "loaded"
	case StatusSkipped:
		return "skipped"
	case StatusFailed:
		return "failed"
	}
	return "unspecified"
}

// ToolLoad is the outcome of constructing one tool, with the reason of a
// skip or a failure.
type ToolLoad struct {
	Name   string
	Status LoadStatus
	Reason string
}

// CallRequest runs one tool call.
type CallRequest struct {
	ToolCallID string
	ToolName   string
	// Arguments as JSON, already validated by the host.
	Arguments json.RawMessage
	// LoadID is the load whose tool runs the call ("": the one load).
	LoadID string
	// TraceContext is the W3C trace context of the host's span of the
	// call (traceparent, tracestate); nil when the host traces nothing.
	TraceContext map[string]string
}

// ResultKind says whether a Result is a success, an error or a rejection.
type ResultKind int

// The result kinds.
const (
	ResultOk ResultKind = iota
	ResultError
	ResultRejected
)

// Part is a piece of tool output for the model: text, or an image (MimeType
// with Data, or URL).
type Part struct {
	Text     string
	MimeType string
	Data     []byte
	URL      string
}

// IsImage reports whether the part is an image.
func (p Part) IsImage() bool { return p.MimeType != "" || p.URL != "" }

// DisplayBlock is shown to the user, not to the model. Data is JSON.
type DisplayBlock struct {
	Kind string
	Data json.RawMessage
}

// Result is a tool call's outcome.
type Result struct {
	Kind     ResultKind
	Output   []Part
	Message  string
	Brief    string
	Display  []DisplayBlock
	Feedback string
	// Runtime marks an error that is a failure to run the tool.
	Runtime bool
}

// ApprovalRequest asks the user to approve an action of a running call.
type ApprovalRequest struct {
	ToolCallID  string
	ToolName    string
	Action      string
	Description string
	Display     []DisplayBlock
}

// Decision is the answer to an ApprovalRequest.
type Decision struct {
	Approved bool
	Feedback string
}

// Environment describes the machine the host runs on.
type Environment struct {
	OS        string
	ShellName string
	ShellPath string
	WorkDir   string
	Now       time.Time
}

// ProgressReport says how far a running call has got.
type ProgressReport struct {
	ToolCallID string
	ToolName   string
	Progress   float64
	// Total is 0 when unknown.
	Total   float64
	Message string
}

// QuestionOption is one answer a user may pick.
type QuestionOption struct {
	Label       string
	Description string
}

// Question is one question for the user.
type Question struct {
	Question    string
	Header      string
	Options     []QuestionOption
	MultiSelect bool
}

// QuestionRequest asks the user questions for a running call.
type QuestionRequest struct {
	ToolCallID string
	ToolName   string
	Questions  []Question
}

// Answers are the user's answers by question text.
type Answers struct {
	Answers   map[string]string
	Dismissed bool
}

// ModelInfo describes the model the session runs.
type ModelInfo struct {
	Provider          string
	Name              string
	Alias             string
	Capabilities      []string
	CapabilitiesKnown bool
	MaxContextSize    int64
}
