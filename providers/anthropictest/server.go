// Package anthropictest is an Anthropic Messages API server for tests. It
// answers each POST /v1/messages with the next scripted Response, streamed
// as the real API does (server-sent events message_start,
// content_block_start, content_block_delta with text_delta, thinking_delta,
// signature_delta and input_json_delta, content_block_stop, message_delta,
// message_stop; one flush per event), or with an API error, and records
// every request so tests can assert what a provider sent.
//
//	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("Hel", "lo")}})
//	p, _ := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client()})
package anthropictest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kosong-host/kosong-host/providers/internal/fakeapi"
)

// Response is one scripted answer of the server.
type Response struct {
	// Blocks are the content blocks, streamed in order.
	Blocks []Block
	// StopReason defaults to tool_use when a block is a tool_use, else
	// end_turn.
	StopReason string
	// Usage, when set, is reported in message_start (input and cache
	// tokens) and message_delta (output tokens).
	Usage *Usage
	// RawEvents, when set, are streamed instead of the events built from
	// the fields above.
	RawEvents []Event

	// Status, when neither 0 nor 200, answers with that HTTP status and an
	// Anthropic error body instead of a stream.
	Status int
	// ErrorType and ErrorMessage are the error body's (defaults per status).
	ErrorType    string
	ErrorMessage string

	// BreakAfter > 0 aborts the connection after that many events (or
	// after the last one), as a server dying mid-stream would.
	BreakAfter int
	// StallHeaders never answers: the handler sends no status, no header
	// and no byte until the client goes away, as a hung server or proxy.
	StallHeaders bool
	// StallAfter > 0 goes silent after that many events (pings not counted) (no byte, no
	// comment) until the client goes away.
	StallAfter int
	// OmitStop ends the stream cleanly without message_stop.
	OmitStop bool
	// StreamErrorType, when set, sends `event: error` with that error type
	// (and StreamErrorMessage) after the events, instead of the end.
	StreamErrorType    string
	StreamErrorMessage string
	// Pings sends a ping event before every event.
	Pings bool
	// AfterEvent, when set, is called after event n (0-based, pings not
	// counted) was written and flushed. It may block to let a test observe
	// what the client did so far; ctx ends when the client goes away.
	AfterEvent func(ctx context.Context, n int, ev Event)
}

// Usage is the token usage reported, in Anthropic's terms.
type Usage struct {
	InputTokens              int
	OutputTokens             int
	CacheReadInputTokens     int
	CacheCreationInputTokens int
}

// Server is the test server; it is closed when the test ends.
type Server struct {
	*httptest.Server

	*fakeapi.Script[Response, Request]
}

// NewServer starts a server answering with responses, in order. Once the
// queue is empty it answers 500.
func NewServer(t testing.TB, responses ...Response) *Server {
	t.Helper()
	s := &Server{Script: fakeapi.NewScript[Response, Request](responses)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the base URL to configure a client with (the SDK appends
// /v1/messages).
func (s *Server) BaseURL() string { return s.URL }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	decodeErr := json.Unmarshal(body, &rec.Messages)
	if decodeErr == nil {
		decodeErr = json.Unmarshal(body, &rec.JSON)
	}

	resp, n, ok := s.Next(rec)

	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		writeError(w, http.StatusNotFound, "not_found_error", fmt.Sprintf("anthropictest: only POST /v1/messages is served, not %s %s", r.Method, r.URL.Path))
	case decodeErr != nil:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "anthropictest: request body is not JSON: "+decodeErr.Error())
	case !ok:
		writeError(w, http.StatusInternalServerError, "api_error", fmt.Sprintf("anthropictest: no scripted response left for request #%d (%d served); Enqueue more", n, n-1))
	case resp.StallHeaders:
		<-r.Context().Done()
	case resp.Status != 0 && resp.Status != http.StatusOK:
		typ, msg := resp.ErrorType, resp.ErrorMessage
		if typ == "" {
			typ = ErrorType(resp.Status)
		}
		if msg == "" {
			msg = http.StatusText(resp.Status)
		}
		writeError(w, resp.Status, typ, msg)
	default:
		writeStream(w, r, rec.Messages.Model, resp)
	}
}

// ErrorType is the API's error type for an HTTP status.
func ErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == 529:
		return "overloaded_error"
	case status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

func errorBody(typ, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
	return b
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_anthropictest")
	w.WriteHeader(status)
	_, _ = w.Write(errorBody(typ, msg))
}

func writeStream(w http.ResponseWriter, r *http.Request, model string, resp Response) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	for n, ev := range Events(model, resp) {
		if resp.BreakAfter > 0 && n >= resp.BreakAfter {
			panic(http.ErrAbortHandler) // the client sees an unexpected EOF
		}
		if resp.StallAfter > 0 && n >= resp.StallAfter {
			<-r.Context().Done()
			return
		}
		var b bytes.Buffer
		if resp.Pings {
			b.WriteString("event: ping\ndata: {\"type\": \"ping\"}\n\n")
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", ev.Type, ev.Data)
		if _, err := w.Write(b.Bytes()); err != nil {
			return
		}
		flush()
		if resp.AfterEvent != nil {
			resp.AfterEvent(r.Context(), n, ev)
		}
	}
	switch {
	case resp.BreakAfter > 0:
		panic(http.ErrAbortHandler)
	case resp.StreamErrorType != "":
		msg := resp.StreamErrorMessage
		if msg == "" {
			msg = "Overloaded"
		}
		_, _ = fmt.Fprintf(w, "event: error\ndata: %s\n\n", errorBody(resp.StreamErrorType, msg))
	}
	flush()
}
