// Package googletest is a Gemini API server for tests. It answers each
// POST /v1beta/models/MODEL:streamGenerateContent?alt=sse with the next
// scripted Response, streamed as the real API does (server-sent events,
// each `data:` a GenerateContentResponse chunk, with thought parts,
// functionCall parts and thoughtSignatures; one flush per chunk), or with a
// Google API error, and records every request so tests can assert what a
// provider sent.
//
//	srv := googletest.NewServer(t, googletest.Response{Text: []string{"Hel", "lo"}})
//	p, _ := google.New(google.Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client()})
package googletest

import (
	"context"
	"encoding/base64"
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
	// Thoughts are streamed first, one thought part per chunk; the last one
	// carries ThoughtSignature when set.
	Thoughts         []string
	ThoughtSignature string
	// Text is streamed next, one text part per chunk; the last one carries
	// TextSignature when set (a chunk with an empty text part does when
	// there is no text).
	Text          []string
	TextSignature string
	// Calls are streamed last, one functionCall part per chunk, or all in
	// one chunk with CallsInOneChunk.
	Calls           []Call
	CallsInOneChunk bool
	// FinishReason defaults to STOP; it comes in a last chunk, with the
	// usage.
	FinishReason string
	// OmitFinish leaves the finish reason out (the stream still ends
	// cleanly).
	OmitFinish bool
	Usage      *Usage
	// RawChunks, when set, are streamed verbatim instead.
	RawChunks []string

	// Status, when neither 0 nor 200, answers with that HTTP status and a
	// Google API error instead of a stream.
	Status int
	// ErrorStatus, ErrorMessage and ErrorReason (an ErrorInfo reason such
	// as API_KEY_INVALID) are the error's (defaults per status).
	ErrorStatus  string
	ErrorMessage string
	ErrorReason  string

	// BreakAfter > 0 aborts the connection after that many chunks (or
	// after the last one).
	BreakAfter int
	// StallHeaders never answers: the handler sends no status, no header
	// and no byte until the client goes away, as a hung server or proxy.
	StallHeaders bool
	// StallAfter > 0 goes silent after that many chunks (no byte, no
	// comment) until the client goes away.
	StallAfter int
	// StreamErrorCode, when set, sends `data: {"error": ...}` with that
	// code after the chunks, instead of the final chunk.
	StreamErrorCode int
	// AfterChunk, when set, is called after chunk n (0-based) was written
	// and flushed. It may block; ctx ends when the client goes away.
	AfterChunk func(ctx context.Context, n int, data string)
}

// Call is a function call of the scripted model.
type Call struct {
	// ID is usually empty: the Gemini API gives none.
	ID   string
	Name string
	// Args is the arguments JSON object ({} when empty).
	Args      string
	Signature string
}

// Usage is the usage metadata reported, in Gemini's terms.
type Usage struct {
	PromptTokens     int
	CandidatesTokens int
	ThoughtsTokens   int
	CachedTokens     int
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
// /v1beta/models/...).
func (s *Server) BaseURL() string { return s.URL }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	if rest, ok := strings.CutPrefix(r.URL.Path, "/v1beta/models/"); ok {
		rec.Model, _, _ = strings.Cut(rest, ":")
	}
	decodeErr := json.Unmarshal(body, &rec.Generate)
	if decodeErr == nil {
		decodeErr = json.Unmarshal(body, &rec.JSON)
	}

	resp, n, ok := s.Next(rec)

	switch {
	case r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1beta/models/") || !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") || r.URL.Query().Get("alt") != "sse":
		writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("googletest: only POST /v1beta/models/M:streamGenerateContent?alt=sse is served, not %s %s", r.Method, r.URL), "")
	case decodeErr != nil:
		writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "googletest: request body is not JSON: "+decodeErr.Error(), "")
	case !ok:
		writeError(w, http.StatusInternalServerError, "INTERNAL", fmt.Sprintf("googletest: no scripted response left for request #%d (%d served); Enqueue more", n, n-1), "")
	case resp.StallHeaders:
		<-r.Context().Done()
	case resp.Status != 0 && resp.Status != http.StatusOK:
		status, msg := resp.ErrorStatus, resp.ErrorMessage
		if status == "" {
			status = StatusName(resp.Status)
		}
		if msg == "" {
			msg = http.StatusText(resp.Status)
		}
		writeError(w, resp.Status, status, msg, resp.ErrorReason)
	default:
		writeStream(w, r, resp)
	}
}

// StatusName is Google's status for an HTTP status.
func StatusName(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}

func errorJSON(code int, status, msg, reason string) []byte {
	e := map[string]any{"code": code, "message": msg, "status": status}
	if reason != "" {
		e["details"] = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com"}}
	}
	b, _ := json.Marshal(map[string]any{"error": e})
	return b
}

func writeError(w http.ResponseWriter, code int, status, msg, reason string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(errorJSON(code, status, msg, reason))
}

func sig(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func chunk(parts []map[string]any, finish string, usage *Usage) string {
	cand := map[string]any{"index": 0}
	if parts != nil {
		ps := make([]any, len(parts))
		for i, p := range parts {
			ps[i] = p
		}
		cand["content"] = map[string]any{"role": "model", "parts": ps}
	}
	if finish != "" {
		cand["finishReason"] = finish
	}
	m := map[string]any{"candidates": []any{cand}, "modelVersion": "googletest", "responseId": "googletest-response"}
	if usage != nil {
		m["usageMetadata"] = map[string]any{
			"promptTokenCount": usage.PromptTokens, "candidatesTokenCount": usage.CandidatesTokens,
			"thoughtsTokenCount": usage.ThoughtsTokens, "cachedContentTokenCount": usage.CachedTokens,
			"totalTokenCount": usage.PromptTokens + usage.CandidatesTokens + usage.ThoughtsTokens,
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // plain values only
	}
	return string(b)
}

// Chunks returns the JSON of every chunk the server streams for resp, in
// order (stream errors not included).
func Chunks(resp Response) []string {
	if resp.RawChunks != nil {
		return resp.RawChunks
	}
	var out []string
	for i, t := range resp.Thoughts {
		p := map[string]any{"text": t, "thought": true}
		if i == len(resp.Thoughts)-1 && resp.ThoughtSignature != "" {
			p["thoughtSignature"] = sig(resp.ThoughtSignature)
		}
		out = append(out, chunk([]map[string]any{p}, "", nil))
	}
	for i, t := range resp.Text {
		p := map[string]any{"text": t}
		if i == len(resp.Text)-1 && resp.TextSignature != "" {
			p["thoughtSignature"] = sig(resp.TextSignature)
		}
		out = append(out, chunk([]map[string]any{p}, "", nil))
	}
	if len(resp.Text) == 0 && resp.TextSignature != "" {
		out = append(out, chunk([]map[string]any{{"text": "", "thoughtSignature": sig(resp.TextSignature)}}, "", nil))
	}
	var calls []map[string]any
	for _, c := range resp.Calls {
		args := map[string]any{}
		if strings.TrimSpace(c.Args) != "" {
			if err := json.Unmarshal([]byte(c.Args), &args); err != nil {
				panic(fmt.Sprintf("googletest: call %s: args %q: %v", c.Name, c.Args, err))
			}
		}
		fc := map[string]any{"name": c.Name, "args": args}
		if c.ID != "" {
			fc["id"] = c.ID
		}
		p := map[string]any{"functionCall": fc}
		if c.Signature != "" {
			p["thoughtSignature"] = sig(c.Signature)
		}
		calls = append(calls, p)
	}
	if resp.CallsInOneChunk && len(calls) > 0 {
		out = append(out, chunk(calls, "", nil))
	} else {
		for _, p := range calls {
			out = append(out, chunk([]map[string]any{p}, "", nil))
		}
	}
	if resp.StreamErrorCode != 0 {
		return out
	}
	finish := resp.FinishReason
	if finish == "" {
		finish = "STOP"
	}
	if resp.OmitFinish {
		finish = ""
	}
	if finish != "" || resp.Usage != nil {
		out = append(out, chunk([]map[string]any{{"text": ""}}, finish, resp.Usage))
	}
	return out
}

func writeStream(w http.ResponseWriter, r *http.Request, resp Response) {
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flush()
	for n, data := range Chunks(resp) {
		if resp.BreakAfter > 0 && n >= resp.BreakAfter {
			panic(http.ErrAbortHandler)
		}
		if resp.StallAfter > 0 && n >= resp.StallAfter {
			<-r.Context().Done()
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\r\n\r\n", data); err != nil {
			return
		}
		flush()
		if resp.AfterChunk != nil {
			resp.AfterChunk(r.Context(), n, data)
		}
	}
	switch {
	case resp.BreakAfter > 0:
		panic(http.ErrAbortHandler)
	case resp.StreamErrorCode != 0:
		_, _ = fmt.Fprintf(w, "data: %s\r\n\r\n", errorJSON(resp.StreamErrorCode, StatusName(resp.StreamErrorCode), "stream failed", ""))
	}
	flush()
}
