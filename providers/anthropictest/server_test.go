package anthropictest_test

import (
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/anthropictest"
	"github.com/kosong-host/kosong-host/providers/internal/fakeapi"
)

func TestServerWritesSSE(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{
		Blocks: []anthropictest.Block{anthropictest.Thinking("sig", "hm"), anthropictest.Text("Hi"), anthropictest.ToolUse("toolu_1", "Shell", `{"command":"ls"}`, 5)},
		Usage:  &anthropictest.Usage{InputTokens: 3, OutputTokens: 2}, Pings: true,
	})
	resp, body := fakeapi.Post(t, srv.Server, "/v1/messages", `{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	order := []string{"event: message_start", `"model":"claude-x"`, "event: content_block_start", `"type":"thinking_delta"`, `"type":"signature_delta"`,
		"event: content_block_stop", `"type":"text_delta"`, `"id":"toolu_1"`, `"partial_json":"{\"com"`, `"stop_reason":"tool_use"`, "event: message_stop"}
	rest := body
	for _, w := range order {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, body)
		}
		rest = rest[i:]
	}
	if !strings.Contains(body, "event: ping") {
		t.Error("no ping")
	}
	req := srv.LastRequest(t)
	if req.Messages.Model != "claude-x" || req.Messages.Messages[0].Text() != "hi" || !req.Messages.Stream {
		t.Errorf("recorded %+v", req.Messages)
	}
}

func TestServerErrors(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{Status: 529})
	resp, body := fakeapi.Post(t, srv.Server, "/v1/messages", `{"model":"m"}`)
	if resp.StatusCode != 529 || !strings.Contains(body, `"type":"overloaded_error"`) {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	resp, body = fakeapi.Post(t, srv.Server, "/v1/messages", `{"model":"m"}`)
	if resp.StatusCode != 500 || !strings.Contains(body, "no scripted response left for request #2") {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	if resp, _ := fakeapi.Post(t, srv.Server, "/v1/complete", `{}`); resp.StatusCode != 404 {
		t.Errorf("status %d for another path", resp.StatusCode)
	}
	srv.Enqueue(anthropictest.Response{})
	if srv.Pending() != 1 || len(srv.Requests()) != 3 {
		t.Errorf("pending %d requests %d", srv.Pending(), len(srv.Requests()))
	}
}
