package openaitest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/internal/fakeapi"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

func TestServerWritesSSE(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{
		Text:      []string{"Hel", "lo"},
		ToolCalls: []openaitest.ToolCall{{Name: "Shell", Arguments: `{"command":"ls"}`}},
		Usage:     &openaitest.Usage{PromptTokens: 3, CompletionTokens: 2},
		Quirks:    openaitest.Quirks{Comments: 1, KimiIDs: true},
	})
	resp, body := fakeapi.Post(t, srv.Server, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !strings.HasSuffix(body, "data: [DONE]\n\n") || !strings.Contains(body, ": keep-alive\n\n") {
		t.Errorf("body = %q", body)
	}
	var datas []map[string]any
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, "data: "); ok && rest != "[DONE]" {
			var m map[string]any
			if err := json.Unmarshal([]byte(rest), &m); err != nil {
				t.Fatalf("chunk %q: %v", rest, err)
			}
			datas = append(datas, m)
		}
	}
	last := datas[len(datas)-1]
	if choices := last["choices"].([]any); len(choices) != 0 || last["usage"] == nil {
		t.Errorf("last chunk = %v, want the usage chunk", last)
	}
	if !strings.Contains(body, `"id":"functions.Shell:0"`) {
		t.Errorf("no Kimi-style id in %q", body)
	}

	req := srv.LastRequest(t)
	if req.Chat.Model != "m" || len(req.Chat.Messages) != 1 || req.Chat.Messages[0].Text() != "hi" || req.JSON["stream"] != true {
		t.Errorf("recorded request = %+v", req)
	}
}

func TestServerStatusAndEmptyQueue(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Status: 429})
	resp, body := fakeapi.Post(t, srv.Server, "/v1/chat/completions", `{"model":"m"}`)
	if resp.StatusCode != 429 || !strings.Contains(body, "rate_limit") {
		t.Errorf("status %d body %q", resp.StatusCode, body)
	}
	resp, body = fakeapi.Post(t, srv.Server, "/v1/chat/completions", `{"model":"m"}`)
	if resp.StatusCode != 500 || !strings.Contains(body, "no scripted response left for request #2") {
		t.Errorf("status %d body %q", resp.StatusCode, body)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests recorded, want 2", n)
	}
	srv.Enqueue(openaitest.Response{Text: []string{"x"}})
	if srv.Pending() != 1 {
		t.Errorf("Pending = %d", srv.Pending())
	}
}

func TestChunksQuirks(t *testing.T) {
	resp := openaitest.Response{
		ToolCalls: []openaitest.ToolCall{{ID: "a", Name: "X", Arguments: `{"k":1}`}, {ID: "b", Name: "Y", Arguments: `{}`}},
		Quirks:    openaitest.Quirks{Interleave: true, FirstIndexOne: true, NameLater: true, FinishEveryChunk: true, NullContent: true},
	}
	all := strings.Join(openaitest.Chunks("m", resp), "\n")
	for _, want := range []string{`"id":"a","index":1`, `"id":"b","index":2`, `"content":null`, `"finish_reason":"tool_calls"`} {
		if !strings.Contains(all, want) {
			t.Errorf("chunks lack %s:\n%s", want, all)
		}
	}
	if strings.Contains(all, `"finish_reason":null`) {
		t.Errorf("unexpected chunks:\n%s", all)
	}
}
