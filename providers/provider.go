package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/kosong-host/kosong-host/providers/timeouts"
)

// Request is what the loop asks of a provider for one model response.
type Request struct {
	System  string
	History []Message
	Tools   []ToolDef
}

// EventKind says what an Event carries.
type EventKind int

// The kinds of stream events.
const (
	// EventText carries a delta of assistant text in Text.
	EventText EventKind = iota + 1
	// EventReasoning carries a delta of reasoning content in Text.
	EventReasoning
	// EventToolCall carries one complete tool call in ToolCall, emitted the
	// moment the call is complete (not at the end of the stream).
	EventToolCall
	// EventUsage carries the token usage of the response in Usage.
	EventUsage
	// EventStop carries why the model stopped, in Stop. Providers emit it
	// once, after every other event of the response, when the API reports a
	// reason. Tool calls cut off by the output limit are emitted before it,
	// as EventToolCall with ToolCall.Truncated set.
	EventStop
	// EventToolCallPart carries a piece of a tool call still being
	// streamed, in Part. A provider emits the first part of a call as soon
	// as it knows the call's id and name (its arguments may be empty:
	// it announces the call), then one part per fragment of the arguments
	// as the API streams them. The parts of a call come before its
	// EventToolCall, and their Arguments, concatenated in order, are that
	// call's Arguments. Consumers may ignore them: EventToolCall alone
	// carries the whole call.
	EventToolCallPart
)

// ToolCallPart is a piece of a tool call being streamed: the call's ID and
// Name (set in every part) and the next fragment of its arguments text.
type ToolCallPart struct {
	ID        string
	Name      string
	Arguments string
}

// StopReason says why a model response ended, in the provider-neutral terms
// the loop and the front ends use.
type StopReason string

// The stop reasons.
const (
	// StopEnd: the model finished its answer (OpenAI "stop", Anthropic
	// "end_turn"/"stop_sequence", Gemini "STOP").
	StopEnd StopReason = "end_turn"
	// StopToolUse: the model stopped to call tools.
	StopToolUse StopReason = "tool_use"
	// StopMaxTokens: the response was cut off by the output token limit
	// (OpenAI "length", Anthropic "max_tokens", Gemini "MAX_TOKENS").
	StopMaxTokens StopReason = "max_tokens"
	// StopContentFilter: the provider stopped the response for its content
	// (OpenAI "content_filter", Anthropic "refusal", Gemini "SAFETY"...).
	StopContentFilter StopReason = "content_filter"
	// StopOther is any other reason a provider reports.
	StopOther StopReason = "other"
)

// Event is one item of a streamed model response.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall *ToolCall
	Part     *ToolCallPart
	Usage    *Usage
	Stop     StopReason
}

// Stream is a streamed model response. Next returns io.EOF after the last
// event. Close releases the connection; it is safe to call more than once.
type Stream interface {
	Next() (Event, error)
	Close() error
}

// SignedStream is a Stream whose response carries an opaque reasoning
// signature (Anthropic's thinking signature, Gemini's thought signatures)
// that the provider needs back with the assistant message. It is valid once
// Next has returned io.EOF.
type SignedStream interface {
	Stream
	ReasoningSignature() string
}

// ChatProvider streams model responses.
type ChatProvider interface {
	// Name is the provider's name: kimi, openai, scripted...
	Name() string
	// Model is the model name sent to the provider.
	Model() string
	// Stream starts one model response. Errors, from Stream or from the
	// stream's Next, are *Error when the provider can classify them.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// ErrorKind classifies provider failures.
type ErrorKind int

// The provider error classes.
const (
	ErrUnknown ErrorKind = iota
	// ErrAuth is a 401/403: the key is wrong or missing. Not retried.
	ErrAuth
	// ErrRateLimit is a 429. Retried.
	ErrRateLimit
	// ErrServer is a 5xx. Retried.
	ErrServer
	// ErrConnection is a connection failure, a timeout or a stream broken
	// mid-way. Retried.
	ErrConnection
	// ErrEmptyResponse is a response with no text and no tool call. Retried.
	ErrEmptyResponse
	// ErrBadRequest is a 400 or another 4xx: the request was wrong. Not retried.
	ErrBadRequest
	// ErrScriptExhausted is the scripted provider running out of turns.
	ErrScriptExhausted
	// ErrTimeout is a wait on the API that expired: no response headers
	// within the connect timeout, or a stream silent for the stream idle
	// timeout (see providers/timeouts). Retried.
	ErrTimeout
)

func (k ErrorKind) String() string {
	switch k {
	case ErrAuth:
		return "authentication error"
	case ErrRateLimit:
		return "rate limited"
	case ErrServer:
		return "server error"
	case ErrConnection:
		return "connection error"
	case ErrEmptyResponse:
		return "empty response"
	case ErrBadRequest:
		return "bad request"
	case ErrScriptExhausted:
		return "script exhausted"
	case ErrTimeout:
		return "timed out"
	default:
		return "provider error"
	}
}

// Error is a classified provider failure.
type Error struct {
	Provider   string
	Kind       ErrorKind
	StatusCode int    // HTTP status, when there was one
	EnvVar     string // for ErrAuth: the variable that holds the key
	Err        error
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s", e.Provider, e.Kind)
	if e.StatusCode != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.StatusCode)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Kind == ErrAuth && e.EnvVar != "" {
		msg += fmt.Sprintf("; check %s", e.EnvVar)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether the failure may go away on a retry.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrServer, ErrConnection, ErrEmptyResponse, ErrTimeout:
		return true
	}
	return false
}

// NewError is a classified failure of the named provider; an auth error
// names envVar, the variable holding the key.
func NewError(provider string, kind ErrorKind, status int, envVar string, err error) *Error {
	e := &Error{Provider: provider, Kind: kind, StatusCode: status, Err: err}
	if kind == ErrAuth {
		e.EnvVar = envVar
	}
	return e
}

// ContextError reports the end of ctx as such, not as a provider failure
// (so it is never retried); nil while ctx is live.
func ContextError(ctx context.Context, provider string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", provider, err)
	}
	return nil
}

// KindForStatus classifies an HTTP status of a provider's API: 401/403 are
// auth errors, 429 rate limiting, 408 a connection error (the request timed
// out), other 5xx server errors and other 4xx bad requests.
func KindForStatus(status int) ErrorKind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ErrAuth
	case status == http.StatusTooManyRequests:
		return ErrRateLimit
	case status == http.StatusRequestTimeout:
		return ErrConnection
	case status >= 500:
		return ErrServer
	case status >= 400:
		return ErrBadRequest
	}
	return ErrUnknown
}

// StallError reports a wait on the API that expired (a *timeouts.Error
// anywhere in err's chain) as an ErrTimeout of the named provider; nil when
// err is no such expiry.
func StallError(provider string, err error) *Error {
	var te *timeouts.Error
	if !errors.As(err, &te) {
		return nil
	}
	return &Error{Provider: provider, Kind: ErrTimeout, Err: te}
}

// IsRetryable reports whether err is a retryable provider error.
func IsRetryable(err error) bool {
	var pe *Error
	return errors.As(err, &pe) && pe.Retryable()
}
