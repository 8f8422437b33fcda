// Package serverclient is the Go client of the HTTP API of `kosong-host
// serve` (docs/server.md): the request and response types of /v1, typed
// calls, and an event stream that reads a session's Server-Sent Events and
// reconnects with Last-Event-ID, missing nothing the server still holds.
// The server (host/server) answers with these same types.
package serverclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// APIVersion is the path prefix of the API.
const APIVersion = "/v1"

// The approval decisions of AnswerApproval.
const (
	DecisionOnce    = "once"
	DecisionSession = "session"
	DecisionReject  = "reject"
)

// The session statuses.
const (
	// StatusIdle: open, no turn runs.
	StatusIdle = "idle"
	// StatusRunning: open, a turn runs.
	StatusRunning = "running"
	// StatusSaved: not open in the server (saved by an earlier server, or
	// closed); a message opens it again, resumed.
	StatusSaved = "saved"
)

// The session modes of CreateSession.
const (
	ModeAsk  = "ask"  // tools that need approval ask the clients (default)
	ModeYolo = "yolo" // every action is approved
	ModePlan = "plan" // plan mode; approvals ask
)

// CreateSession is the body of POST /v1/sessions.
type CreateSession struct {
	// Cwd is the session's work dir (absolute, an existing folder).
	Cwd string `json:"cwd"`
	// Agent is an agent spec file (absolute, or relative to Cwd); ""
	// finds the agent of Cwd as `run` does.
	Agent string `json:"agent,omitempty"`
	// Model is a model alias or name (as run's --model); "" the server's.
	Model string `json:"model,omitempty"`
	// Mode is ask, yolo or plan ("" the server's default).
	Mode string `json:"mode,omitempty"`
	// Resume is a saved session's id to continue.
	Resume string `json:"resume,omitempty"`
}

// Session is one session as the API shows it.
type Session struct {
	ID        string    `json:"id"`
	Cwd       string    `json:"cwd"`
	Agent     string    `json:"agent"`
	AgentFile string    `json:"agent_file,omitempty"`
	Provider  string    `json:"provider,omitempty"`
	Model     string    `json:"model,omitempty"`
	Mode      string    `json:"mode"`
	Status    string    `json:"status"`
	Created   time.Time `json:"created"`
	// LastSeq is the sequence number of the session's newest event.
	LastSeq int64 `json:"last_seq"`
	// Queued counts the messages waiting for the running turn to end.
	Queued int `json:"queued"`
	// Pending are the approval and question requests waiting for an answer.
	Pending []string `json:"pending"`
	// Interrupted: a turn was cancelled by the server's shutdown (its
	// completed steps are saved).
	Interrupted bool `json:"interrupted"`
	// Note says, in one line, what the workspace trust rules left out
	// (an untrusted folder's agent or .env); "" when nothing.
	Note string `json:"note,omitempty"`
	// Engine is where the session's turns run: "" in the server's
	// process, "temporal" on the workers of serve --engine temporal.
	Engine string `json:"engine,omitempty"`
}

// SessionList is the answer of GET /v1/sessions.
type SessionList struct {
	Sessions []Session `json:"sessions"`
}

// Image is an image attached to a message.
type Image struct {
	// MimeType is image/png, image/jpeg, image/gif or image/webp.
	MimeType string `json:"mime_type"`
	// Data is the image, base64.
	Data string `json:"data"`
}

// Message is the body of POST /v1/sessions/{id}/messages.
type Message struct {
	Text   string  `json:"text"`
	Images []Image `json:"images,omitempty"`
	// Steer sends the text into the running turn instead of queueing it.
	Steer bool `json:"steer,omitempty"`
}

// The outcomes of a message.
const (
	MessageStarted = "started" // a turn started with it
	MessageQueued  = "queued"  // it runs as a turn once the running one ends
	MessageSteered = "steered" // it entered the running turn
)

// MessageAccepted is the answer of POST /v1/sessions/{id}/messages.
type MessageAccepted struct {
	Status string `json:"status"`
	// Seq is the sequence number of the event that records the message
	// (turn_start, queued or steer).
	Seq int64 `json:"seq"`
}

// Cancelled is the answer of POST /v1/sessions/{id}/cancel.
type Cancelled struct {
	// Cancelled: a turn was running and is cancelled; false: none ran.
	Cancelled bool `json:"cancelled"`
	// Dropped counts the queued messages dropped.
	Dropped int `json:"dropped"`
}

// ApprovalAnswer is the body of POST /v1/sessions/{id}/approvals/{request_id}.
type ApprovalAnswer struct {
	Decision string `json:"decision"`
	Feedback string `json:"feedback,omitempty"`
}

// QuestionAnswer is the body of POST /v1/sessions/{id}/questions/{request_id}:
// the answers by question text (a label, labels joined with ", ", or
// free text); empty answers or Dismissed dismiss the questions.
type QuestionAnswer struct {
	Answers   map[string]string `json:"answers,omitempty"`
	Dismissed bool              `json:"dismissed,omitempty"`
}

// Answered is the answer of the approval and question endpoints.
type Answered struct {
	RequestID string `json:"request_id"`
	Seq       int64  `json:"seq"`
}

// Health is the answer of GET /healthz.
type Health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

// HistoryMessage is one message of GET /v1/sessions/{id}/history.
type HistoryMessage struct {
	Role       string        `json:"role"`
	Text       string        `json:"text"`
	ToolCalls  []HistoryCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

// HistoryCall is a tool call of a history message.
type HistoryCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// History is the answer of GET /v1/sessions/{id}/history.
type History struct {
	Messages []HistoryMessage `json:"messages"`
}

// ErrorBody is the body of every error answer.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is what went wrong: a stable code and one line for people.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// The error codes.
const (
	CodeUnauthorized = "unauthorized"       // 401: no token or a wrong one
	CodeTokenInQuery = "token_in_query"     // 400: a token in the query string
	CodeBadRequest   = "bad_request"        // 400: the body or a parameter is invalid
	CodeNotFound     = "not_found"          // 404: no such session, request or path
	CodeGone         = "session_deleted"    // 410: the session was deleted
	CodeConflict     = "conflict"           // 409: already answered
	CodeTooLarge     = "too_large"          // 413: the body is over the limit
	CodeTooMany      = "too_many_sessions"  // 429: the session limit is reached
	CodeShuttingDown = "shutting_down"      // 503: the server is stopping
	CodeOpenFailed   = "open_failed"        // 422: the session could not be opened
	CodeBadHost      = "bad_host"           // 403: the Host header is not the server's
	CodeMethod       = "method_not_allowed" // 405
	CodeEngine       = "engine_failed"      // 502: the session's engine (Temporal) did not answer
)

// Error is an error answer of the API.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("server: %s (%d %s)", e.Message, e.Status, e.Code)
}

// IsCode reports whether err is an API error with this code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Event is one event of a session's stream: a stream-json event
// (docs/stream-json.md) or one of the server's own (docs/server.md).
type Event struct {
	// Seq is the event's sequence number in its session (the SSE id).
	Seq int64
	// Type is the event's "type".
	Type string
	// Data is the event's JSON object.
	Data json.RawMessage
}

// Decode decodes the event's JSON into v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Data, v) }

// Dir is the server's folder in the state dir: $XDG_STATE_HOME/kosong-host/server
// (else ~/.local/state/kosong-host/server), holding the token and the
// session list.
func Dir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "kosong-host", "server"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", errors.New("no state directory: set XDG_STATE_HOME or HOME")
		}
	}
	return filepath.Join(home, ".local", "state", "kosong-host", "server"), nil
}

// TokenFile is the file the server keeps its bearer token in.
func TokenFile(getenv func(string) string) (string, error) {
	d, err := Dir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "token"), nil
}

// ReadToken reads the token a client sends: the variable env when not ""
// (it must be set), else the server's token file of this user.
func ReadToken(env string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if env != "" {
		t := strings.TrimSpace(getenv(env))
		if t == "" {
			return "", fmt.Errorf("the token variable %s is not set", env)
		}
		return t, nil
	}
	path, err := TokenFile(getenv)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("no server token: %w (start kosong-host serve on this machine, or give the token with --token-env VAR)", err)
	}
	return strings.TrimSpace(string(b)), nil
}
