// Package limits is the one table of the sizes kosong-host bounds: a tool
// result's text and images, a tool's schema and description, progress
// reports and their rate, an approval request, one stream-json line, and
// the gRPC message limit every host-plugin connection uses, which is
// derived from the others. The SDK applies the result caps before a result
// goes on the wire; the host applies every cap to what it receives, so a
// plugin not built on the SDK is bounded the same way. docs/limits.md is
// the table for people.
//
// It also holds how text is cut to a cap (Truncate, TruncatedMarker) and
// where the full text of a cut result is saved (SaveFullOutput), so that
// the SDK and the host cut at the same place with the same marker.
package limits

import "time"

// A tool result.
const (
	// ResultChars caps a result's text output, all text parts together,
	// in characters; each of its message and feedback is capped alike.
	ResultChars = 50_000
	// ResultLineChars caps each line of a result's text output.
	ResultLineChars = 2_000
	// BriefChars caps a result's brief, the one line shown to the user,
	// and the reason a plugin gives for a tool it did not load.
	BriefChars = 1_000
	// ImageBytes caps each image of a result: its data, or its URL. An
	// image over it is replaced by a line saying so.
	ImageBytes = 15 << 20
	// DisplayBytes caps the display blocks of a result, all together (their
	// JSON data). Blocks past it are replaced by one brief block saying so.
	DisplayBytes = 4 << 20
)

// A tool's declaration (its Describe answer). A tool over either cap is
// refused when its plugin loads.
const (
	// SchemaBytes caps a tool's parameters schema (JSON).
	SchemaBytes = 64 << 10
	// DescriptionBytes caps a tool's description.
	DescriptionBytes = 32 << 10
)

// Progress reports of a running call.
const (
	// ProgressMessageChars caps the message of a progress report.
	ProgressMessageChars = 1_000
	// ProgressInterval is the least time between two progress reports of
	// one call that the host passes on (at most 10 a second): a report that
	// comes sooner is held, replacing any report held before it, and passed
	// on when the interval ends, or when the call ends.
	ProgressInterval = 100 * time.Millisecond
)

// ApprovalBytes caps an approval request (its description and the JSON
// data of its display blocks). The description is cut to fit; display
// blocks that do not fit are replaced by one brief block saying so, so the
// user knows they are not seeing everything.
const ApprovalBytes = 4 << 20

// Questions a tool asks the user (the UserInput capability). A request
// over either cap is refused, naming the tool: questions are short, and a
// cut question would not say what the user is answering.
const (
	// Questions caps how many questions one request asks, and how many
	// options each offers.
	Questions = 16
	// QuestionBytes caps the text of one request: its questions, headers
	// and options' labels and descriptions together.
	QuestionBytes = 64 << 10
)

// StreamJSONLineBytes caps one line of stream-json output: the longest
// strings of an event over it are cut, marked TruncatedMarker.
const StreamJSONLineBytes = 1 << 20

// MessageBytes caps every gRPC message between host and plugin, both ways,
// on every connection: a launched plugin's, the host's capability server,
// a remote tool server's, plugintest's. It is the largest image with room
// for the rest of its result (a result's text, display blocks and framing);
// it also holds an approval request and a Describe answer of tools within
// their caps.
const MessageBytes = ImageBytes + messageHeadroom

// messageHeadroom is the room MessageBytes leaves beside one image.
const messageHeadroom = 1 << 20
