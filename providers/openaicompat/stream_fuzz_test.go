package openaicompat_test

import (
	"strings"
	"testing"

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
	srv := streamtest.NewBodyServer(f)
	p, err := openaicompat.New(openaicompat.Config{Name: "fuzz", BaseURL: srv.URL + "/v1", APIKey: "k", Model: "m", HTTPClient: srv.Client()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string) {
		srv.Set(data)
		streamtest.CheckAnyStream(t, p, data)
	})
}
