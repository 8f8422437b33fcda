package google_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/google"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
)

// sse frames each chunk as streamGenerateContent?alt=sse does.
func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\r\n\r\n")
	}
	return b.String()
}

// FuzzStream: whatever streamGenerateContent streams, the provider never
// panics or hangs; it ends with a *providers.Error of one line, or with
// text or tool calls, each with an id and a name.
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"lo"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}`),
		sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hmm","thought":true,"thoughtSignature":"c2ln"}]}}]}`,
			`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"Shell","args":{"command":"ls"}},"thoughtSignature":"c2ln"},{"functionCall":{"id":"c2","name":"Glob","args":{}}}]},"finishReason":"STOP"}]}`),
		sse(`{"promptFeedback":{"blockReason":"SAFETY"}}`),
		sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"x"},{"functionCall":{"name":"","args":{"a":1}}}]},"finishReason":"STOP"}]}`),
		sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"MAX_TOKENS"}]}`),
		sse(`{"candidates":[]}`, `{"candidates":[null]}`),
		sse(`{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}`),
		"data: {nope\r\n\r\n",
		"",
	} {
		f.Add(s)
	}
	srv := streamtest.NewBodyServer(f)
	p, err := google.New(google.Config{BaseURL: srv.URL, APIKey: "k", Model: "gemini-test", HTTPClient: srv.Client()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string) {
		srv.Set(data)
		streamtest.CheckAnyStream(t, p, data)
	})
}

// streamBody streams a response whose body is body.
func streamBody(t *testing.T, body string) streamtest.Result {
	t.Helper()
	srv := streamtest.NewBodyServer(t)
	srv.Set(body)
	p, err := google.New(google.Config{BaseURL: srv.URL, APIKey: "k", Model: "gemini-test", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(context.Background(), providers.Request{History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi")}}}})
	if err != nil {
		return streamtest.Result{Err: err}
	}
	return streamtest.Drain(s, nil)
}

// TestMalformedStreams: what FuzzStream found. A null candidate, in the
// first chunk or a later one, made the SDK panic; a function call without
// a name became a tool call named ""; the SDK's message for a chunk that
// is not JSON quotes it over several lines. Each is a one-line server
// error.
func TestMalformedStreams(t *testing.T) {
	tests := []struct{ body, want string }{
		{sse(`{"candidates":[null]}`), "google: server error: malformed stream chunk: "},
		{sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}]}`, `{"candidates":[null]}`), "google: server error: malformed stream chunk: "},
		{sse(`{"candidates":[{"content":{"role":"model","parts":[{"text":"x"},{"functionCall":{"name":" ","args":{"a":1}}}]},"finishReason":"STOP"}]}`),
			"google: server error: protocol error: a function call has no name"},
		{"\n0", "google: server error: malformed stream chunk: iterateResponseStream: invalid stream chunk: 0"},
	}
	for _, tt := range tests {
		r := streamBody(t, tt.body)
		var pe *providers.Error
		if !errors.As(r.Err, &pe) || pe.Kind != providers.ErrServer || !strings.HasPrefix(r.Err.Error(), tt.want) ||
			strings.Contains(r.Err.Error(), "\n") || len(r.Calls) != 0 {
			t.Errorf("%q: %+v", tt.body, r)
		}
	}
}
