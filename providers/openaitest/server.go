// Package openaitest is an OpenAI-compatible chat completions server for
// tests. It answers each request with the next scripted Response, written as
// real server-sent events (one flush per chunk), can reproduce the stream
// quirks real servers are known for, and records every request it receives
// so tests can assert what a provider sent.
//
//	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"Hel", "lo"}})
//	p, _ := openaicompat.New(openaicompat.Config{BaseURL: srv.BaseURL(), Model: "m", HTTPClient: srv.Client()})
//	...
//	req := srv.LastRequest()
package openaitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/internal/fakeapi"
)

// Response is one scripted answer of the server.
type Response struct {
	// Reasoning is streamed first, one chunk per element, as
	// delta.reasoning_content.
	Reasoning []string
	// Text is streamed next, one chunk per element, as delta.content.
	Text []string
	// ToolCalls are streamed last, as tool call fragments.
	ToolCalls []ToolCall
	// Usage, when set, is sent as the usage chunk (or inside choices[0]
	// with Quirks.UsageInChoice).
	Usage *Usage
	// FinishReason defaults to "tool_calls" when there are tool calls and
	// to "stop" otherwise.
	FinishReason string
	// Quirks switches on the oddities of real servers.
	Quirks Quirks
	// RawChunks, when set, are streamed verbatim as the data chunks instead
	// of the ones built from the fields above (comment lines, BreakAfter,
	// OmitDone, StreamError and AfterChunk still apply).
	RawChunks []string

	// Status, when neither 0 nor 200, answers with that HTTP status and an
	// OpenAI-style JSON error instead of a stream.
	Status int
	// ErrorMessage is the message of that JSON error (a default per status).
	ErrorMessage string
	// ErrorBody, when set, is sent verbatim as the error body instead.
	ErrorBody string

	// BreakAfter > 0 aborts the connection after that many data chunks (or
	// after the last one, if there are fewer), before [DONE], as a server or
	// proxy dying mid-stream would.
	BreakAfter int
	// StallHeaders never answers: the handler sends no status, no header
	// and no byte until the client goes away, as a hung server or proxy.
	StallHeaders bool
	// StallAfter > 0 goes silent after that many data chunks (no byte, no
	// comment) until the client goes away.
	StallAfter int
	// OmitDone ends the stream cleanly but without `data: [DONE]`.
	OmitDone bool
	// StreamError, when set, is sent after the chunks as
	// `data: {"error": {...}}` instead of [DONE].
	StreamError string
	// AfterChunk, when set, is called after data chunk n (0-based, counting
	// every `data:` line but [DONE]) was written and flushed, with the
	// chunk's JSON. It may block, e.g. on a channel, to let a test observe
	// what the client did with the chunks so far; ctx ends when the client
	// goes away.
	AfterChunk func(ctx context.Context, n int, data string)
}

// ToolCall is a tool call the scripted model makes.
type ToolCall struct {
	// ID defaults to call_N (N the call's position) or, with
	// Quirks.KimiIDs, to functions.NAME:N.
	ID        string
	Name      string
	Arguments string
}

// Usage is the token usage reported, in OpenAI's terms.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// CachedTokens goes to usage.prompt_tokens_details.cached_tokens.
	CachedTokens int
}

// Quirks are stream oddities seen in the field. The zero value is a tidy
// OpenAI stream.
type Quirks struct {
	// SplitArguments > 0 cuts each call's arguments into fragments of at
	// most that many bytes.
	SplitArguments int
	// ArgumentsWithName sends the first arguments fragment together with
	// the name instead of in a fragment of its own.
	ArgumentsWithName bool
	// NameLater sends id and type in a first fragment and the name only in
	// the next one.
	NameLater bool
	// TwoFragmentsPerChunk puts two consecutive fragments of the same call
	// into one chunk's tool_calls array.
	TwoFragmentsPerChunk bool
	// Interleave sends the fragments of parallel calls round robin:
	// index 0, 1, 0, 1...
	Interleave bool
	// FirstIndexOne numbers tool calls from 1 instead of 0.
	FirstIndexOne bool
	// MissingIndex leaves the index out of every fragment.
	MissingIndex bool
	// OmitIDs leaves the id out of every fragment.
	OmitIDs bool
	// KimiIDs makes default ids look like Kimi's: functions.NAME:IDX.
	KimiIDs bool
	// FinishEveryChunk sets finish_reason on every chunk, not just the last.
	FinishEveryChunk bool
	// NullContent sends "content": null with tool call fragments and
	// interleaves extra chunks whose delta is just {"content": null}.
	NullContent bool
	// Comments writes that many SSE comment lines (`: keep-alive`,
	// `: PROCESSING`) before every chunk.
	Comments int
	// UsageInChoice puts usage inside choices[0] of the last chunk instead
	// of a final chunk with empty choices.
	UsageInChoice bool
}

// Server is the test server. It embeds the httptest.Server, so URL and
// Client are available; it is closed when the test ends.
type Server struct {
	*httptest.Server

	*fakeapi.Script[Response, Request]
}

// NewServer starts a server answering with responses, in order; more can be
// queued with Enqueue. Once the queue is empty the server answers 500 with
// a message saying so.
func NewServer(t testing.TB, responses ...Response) *Server {
	t.Helper()
	s := &Server{Script: fakeapi.NewScript[Response, Request](responses)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is the base URL to configure a client with (URL + "/v1").
func (s *Server) BaseURL() string { return s.URL + "/v1" }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	decodeErr := json.Unmarshal(body, &rec.Chat)
	if decodeErr == nil {
		decodeErr = json.Unmarshal(body, &rec.JSON)
	}

	resp, n, ok := s.Next(rec)

	switch {
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		writeError(w, http.StatusNotFound, fmt.Sprintf("openaitest: only POST .../chat/completions is served, not %s %s", r.Method, r.URL.Path))
	case decodeErr != nil:
		writeError(w, http.StatusBadRequest, "openaitest: request body is not JSON: "+decodeErr.Error())
	case !ok:
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("openaitest: no scripted response left for request #%d (%d served); Enqueue more", n, n-1))
	case resp.StallHeaders:
		<-r.Context().Done()
	case resp.Status != 0 && resp.Status != http.StatusOK:
		if resp.ErrorBody != "" {
			w.WriteHeader(resp.Status)
			_, _ = io.WriteString(w, resp.ErrorBody)
			return
		}
		msg := resp.ErrorMessage
		if msg == "" {
			msg = defaultMessage(resp.Status)
		}
		writeError(w, resp.Status, msg)
	default:
		writeStream(w, r, rec.Chat.Model, resp)
	}
}

func defaultMessage(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "Invalid Authentication"
	case http.StatusTooManyRequests:
		return "Rate limit reached for requests"
	}
	return http.StatusText(status)
}

func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "invalid_authentication_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_reached_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": errorType(status)},
	})
}

func writeStream(w http.ResponseWriter, r *http.Request, model string, resp Response) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}

	comments := []string{": keep-alive", ": PROCESSING"}
	chunks := resp.RawChunks
	if chunks == nil {
		chunks = Chunks(model, resp)
	}
	for n, data := range chunks {
		if resp.BreakAfter > 0 && n >= resp.BreakAfter {
			// Dies without the terminating chunk: the client sees an
			// unexpected EOF.
			panic(http.ErrAbortHandler)
		}
		if resp.StallAfter > 0 && n >= resp.StallAfter {
			<-r.Context().Done()
			return
		}
		var b bytes.Buffer
		for i := range resp.Quirks.Comments {
			b.WriteString(comments[i%len(comments)] + "\n\n")
		}
		b.WriteString("data: " + data + "\n\n")
		if _, err := w.Write(b.Bytes()); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if resp.AfterChunk != nil {
			resp.AfterChunk(r.Context(), n, data)
		}
	}
	switch {
	case resp.BreakAfter > 0:
		panic(http.ErrAbortHandler)
	case resp.StreamError != "":
		data, _ := json.Marshal(map[string]any{"error": map[string]any{"message": resp.StreamError, "type": "server_error"}})
		_, _ = fmt.Fprintf(w, "data: %s\n\n", data)
	case resp.OmitDone:
	default:
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
	if flusher != nil {
		flusher.Flush()
	}
}
