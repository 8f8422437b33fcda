package openaicompat_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
)

// sse frames each payload as a data event, and ends with [DONE].
func sse(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String() + "data: [DONE]\n\n"
}

// FuzzStream: whatever an OpenAI-compatible server streams, the provider
// never panics or hangs; it ends with a *providers.Error of one line, or
// with text or tool calls, each with an id and a name.
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		sse(`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}}]}`, `{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`),
		sse(`{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`, `{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`),
		sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Shell","arguments":""}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\":"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"ls\"}"}},{"index":1,"id":"call_b","function":{"name":"Glob","arguments":"{}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		sse(`{"choices":[{"delta":{"tool_calls":[{"id":"functions.Shell:0","function":{"name":"Shell","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}`),
		sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":"}}]}}]}`, `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"Late"}}]},"finish_reason":"tool_calls"}]}`),
		sse(`{"error":{"type":"rate_limit_exceeded","code":"429","message":"slow down"}}`),
		sse(`{"choices":[{"index":0,"delta":{"content":null,"refusal":"no"},"finish_reason":"content_filter"}]}`),
		": comment\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
		"data: {not json}\n\n",
		"data: {\"choices\":[]}\n\ndata: [DONE]\n\n",
		"event: ping\ndata: {}\n\n",
		"",
	} {
		f.Add(s)
	}
	var mu sync.Mutex
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(b))
	}))
	f.Cleanup(srv.Close)
	p, err := openaicompat.New(openaicompat.Config{Name: "fuzz", BaseURL: srv.URL + "/v1", APIKey: "k", Model: "m", HTTPClient: srv.Client()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string) {
		mu.Lock()
		body = data
		mu.Unlock()
		checkStream(t, p, data)
	})
}

func checkStream(t *testing.T, p providers.ChatProvider, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var r streamtest.Result
	s, err := p.Stream(ctx, providers.Request{History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi")}}}})
	if err != nil {
		r.Err = err
	} else {
		r = streamtest.Drain(s, nil)
	}
	if ctx.Err() != nil {
		t.Fatalf("no end within 10s for %q", data)
	}
	if r.Err != nil {
		var pe *providers.Error
		if !errors.As(r.Err, &pe) {
			t.Fatalf("error %T is not a *providers.Error: %v", r.Err, r.Err)
		}
		if strings.ContainsAny(r.Err.Error(), "\n\r") {
			t.Fatalf("error is not one line: %q", r.Err)
		}
		return
	}
	if r.Text == "" && len(r.Calls) == 0 {
		t.Fatalf("a response with no text and no tool call, without an error: %+v", r)
	}
	for _, c := range r.Calls {
		if c.ID == "" || c.Name == "" {
			t.Fatalf("tool call without an id or a name: %+v", c)
		}
	}
}
