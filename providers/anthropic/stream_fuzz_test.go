package anthropic_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/anthropic"
	"github.com/kosong-host/kosong-host/providers/anthropictest"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
)

// sseOf writes events as the Messages API streams them.
func sseOf(evs []anthropictest.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString("event: " + ev.Type + "\ndata: " + ev.Data + "\n\n")
	}
	return b.String()
}

// FuzzStream: whatever the Messages API streams, the provider never
// panics or hangs; it ends with a *providers.Error of one line, or with
// text or tool calls, each with an id and a name.
func FuzzStream(f *testing.F) {
	for _, resp := range []anthropictest.Response{
		{Blocks: []anthropictest.Block{anthropictest.Text("Hel", "lo")}, Usage: &anthropictest.Usage{InputTokens: 3, OutputTokens: 2}},
		{Blocks: []anthropictest.Block{anthropictest.Thinking("sig", "let me", " think"), anthropictest.Text("ok")}},
		{Blocks: []anthropictest.Block{anthropictest.Redacted("xyz"), anthropictest.ToolUse("toolu_1", "Shell", `{"command":"ls"}`, 4),
			anthropictest.ToolUse("toolu_2", "Glob", `{}`, 0)}},
		{Blocks: []anthropictest.Block{anthropictest.Text("cut")}, StopReason: "max_tokens"},
		{Blocks: []anthropictest.Block{anthropictest.ToolUse("", "", `{"a":1}`, 2)}},
	} {
		f.Add(sseOf(anthropictest.Events("claude-test", resp)))
	}
	for _, s := range []string{
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
		"event: ping\ndata: {\"type\":\"ping\"}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		"data: {broken\n\n",
		"",
	} {
		f.Add(s)
	}
	body := &bodyTransport{}
	p, err := anthropic.New(anthropic.Config{BaseURL: "http://api.test", APIKey: "k", Model: "claude-test", HTTPClient: &http.Client{Transport: body}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string) {
		body.set(data)
		streamtest.CheckAnyStream(t, p, data)
	})
}

// bodyTransport answers every request with its body as an event stream, in
// memory: a run costs no connection, so the fuzzer (and its minimizer)
// tries more inputs.
type bodyTransport struct {
	mu   sync.Mutex
	body string
}

func (b *bodyTransport) set(body string) {
	b.mu.Lock()
	b.body = body
	b.mu.Unlock()
}

func (b *bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	b.mu.Lock()
	body := b.body
	b.mu.Unlock()
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(strings.NewReader(body)),
		Request: req, ContentLength: -1,
	}, nil
}

// TestToolUseWithoutName: a tool_use block without a name (found by
// FuzzStream: it became a tool call named "") is a protocol error.
func TestToolUseWithoutName(t *testing.T) {
	for _, name := range []string{"", " "} {
		srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{
			anthropictest.Text("calling"), anthropictest.ToolUse("toolu_1", name, `{"a":1}`, 2)}})
		streamtest.CheckError(t, newProvider(t, srv, nil), userRequest("hi"), streamtest.WantError{
			Provider: "anthropic", Kind: providers.ErrServer, Retryable: true, OnNext: true, Contains: "protocol error: tool_use content block 1 has no name"})
	}
}

// TestErrorEventOnOneLine: an error event whose message or raw text holds
// line breaks (found by FuzzStream: a raw carriage return) gives an error
// of one line.
func TestErrorEventOnOneLine(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"message with line breaks", `{"type":"error","error":{"type":"overloaded_error","message":"line one\nline two\r\nthree"}}`,
			"error event in stream: overloaded_error: line one line two three"},
		{"raw text with a carriage return", "{\"type\":\"error\",\"error\":{\"type\":\"x\r\",\"message\":\"\"}}",
			`error event in stream: : {"type":"error","error":{"type":"x ","message":""}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := anthropictest.NewServer(t, anthropictest.Response{RawEvents: []anthropictest.Event{{Type: "error", Data: tt.data}}})
			streamtest.CheckError(t, newProvider(t, srv, nil), userRequest("hi"), streamtest.WantError{
				Provider: "anthropic", Kind: providers.ErrServer, Retryable: true, OnNext: true, Contains: tt.want})
		})
	}
}
