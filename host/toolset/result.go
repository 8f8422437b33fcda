package toolset

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kosong-host/kosong-host/pluginsdk/arguments"
	"github.com/kosong-host/kosong-host/providers"
)

// Kind says how a tool call ended.
type Kind int

// The result kinds.
const (
	Ok Kind = iota
	// Failed: the tool answered with an error, or the toolset could not run it.
	Failed
	// Rejected: the user rejected an action the tool asked approval for.
	Rejected
)

// Display is a display block for the user (brief, diff, todo...).
type Display struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// Result is the outcome of one tool call.
type Result struct {
	ToolCallID string
	Kind       Kind
	// Output is for the model.
	Output []providers.ContentPart
	// Message explains the result to the model.
	Message string
	// Brief is the one-line summary shown to the user.
	Brief   string
	Display []Display
	// Runtime marks a failure to run the tool (not the tool's own answer).
	Runtime bool
	// Feedback is the user's feedback on a rejection.
	Feedback string
	// Crashed marks a runtime failure where the tool's process stopped
	// during the call (the audit log's status "crashed").
	Crashed bool
}

// IsError reports whether the call failed or was rejected.
func (r Result) IsError() bool { return r.Kind != Ok }

// OutputText joins the text parts of the output.
func (r Result) OutputText() string {
	return providers.Message{Content: r.Output}.Text()
}

// The texts of results made by the toolset itself, as the model sees them.
const (
	briefRuntime    = "Tool runtime error"
	rejectedMessage = "The tool call is rejected by the user. Stop what you are doing and wait for the user to tell you how to proceed."
	runtimeHint     = "This is an unexpected error and the tool is probably not working."
)

// NotFound is the result for a call to a tool the toolset does not have.
func NotFound(name string) Result {
	msg := fmt.Sprintf("Tool `%s` not found", name)
	return Result{Kind: Failed, Message: msg, Brief: msg}
}

// ParseError is the result for arguments that are not JSON.
func ParseError(err error) Result {
	return refused(&arguments.Error{Kind: arguments.Unparsable, Err: err})
}

// ValidateError is the result for arguments that violate the tool's schema.
func ValidateError(err error) Result {
	return refused(&arguments.Error{Kind: arguments.Invalid, Err: err})
}

// refused is the result for arguments that arguments.Schema.Check refused,
// with its text.
func refused(err error) Result {
	var e *arguments.Error
	if !errors.As(err, &e) {
		e = &arguments.Error{Kind: arguments.Invalid, Err: err}
	}
	return Result{Kind: Failed, Message: e.Error(), Brief: arguments.Brief}
}

// RuntimeError is the result for a tool that could not run.
func RuntimeError(err error) Result {
	return Result{Kind: Failed, Runtime: true, Message: "Error running tool: " + err.Error(), Brief: briefRuntime}
}

// RejectedResult is the result for a call the user rejected.
func RejectedResult(feedback string) Result {
	if feedback == "" {
		return Result{Kind: Rejected, Message: rejectedMessage, Brief: "Rejected by user"}
	}
	return Result{Kind: Rejected, Feedback: feedback,
		Message: "The tool call is rejected by the user. User feedback: " + feedback, Brief: "Rejected: " + feedback}
}

// ToolMessage is the tool message the model sees for this result, with the
// reference <system> texts.
func (r Result) ToolMessage() providers.Message {
	var head string
	switch {
	case r.IsError():
		head = "<system>ERROR: " + r.Message
		if r.Runtime {
			head += " " + runtimeHint
		}
		head += "</system>"
	case r.Message != "":
		head = "<system>" + r.Message + "</system>"
	}
	parts := make([]providers.ContentPart, 0, len(r.Output)+1)
	if head != "" {
		parts = append(parts, providers.TextPart(head))
	}
	for _, p := range r.Output {
		if p.Type == providers.PartText && p.Text == "" {
			continue
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		parts = append(parts, providers.TextPart("<system>Tool output is empty.</system>"))
	}
	if head != "" && len(parts) > 1 && parts[1].Type == providers.PartText {
		parts[0].Text += "\n"
	}
	return providers.Message{Role: providers.RoleTool, ToolCallID: r.ToolCallID, Content: parts, IsError: r.IsError()}
}
