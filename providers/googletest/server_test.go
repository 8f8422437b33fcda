package googletest_test

import (
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/googletest"
	"github.com/kosong-host/kosong-host/providers/internal/fakeapi"
)

func TestServerWritesSSE(t *testing.T) {
	srv := googletest.NewServer(t, googletest.Response{
		Thoughts: []string{"hm"}, ThoughtSignature: "sig",
		Text:  []string{"Hi"},
		Calls: []googletest.Call{{Name: "Shell", Args: `{"command":"ls"}`}},
		Usage: &googletest.Usage{PromptTokens: 3, CandidatesTokens: 2},
	})
	resp, body := fakeapi.Post(t, srv.Server, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	order := []string{`"thought":true`, `"thoughtSignature":"c2ln"`, `"text":"Hi"`, `"functionCall":{"args":{"command":"ls"},"name":"Shell"}`, `"finishReason":"STOP"`, `"promptTokenCount":3`}
	rest := body
	for _, w := range order {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, body)
		}
		rest = rest[i:]
	}
	if n := strings.Count(body, "data: "); n != 4 {
		t.Errorf("%d chunks", n)
	}
	req := srv.LastRequest(t)
	if req.Model != "gemini-x" || req.Generate.Contents[0].Text() != "hi" {
		t.Errorf("recorded %+v", req)
	}
}

func TestServerErrors(t *testing.T) {
	srv := googletest.NewServer(t, googletest.Response{Status: 400, ErrorReason: "API_KEY_INVALID"})
	path := "/v1beta/models/m:streamGenerateContent?alt=sse"
	resp, body := fakeapi.Post(t, srv.Server, path, `{}`)
	if resp.StatusCode != 400 || !strings.Contains(body, `"status":"INVALID_ARGUMENT"`) || !strings.Contains(body, `"reason":"API_KEY_INVALID"`) {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	resp, body = fakeapi.Post(t, srv.Server, path, `{}`)
	if resp.StatusCode != 500 || !strings.Contains(body, "no scripted response left for request #2") {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	if resp, _ := fakeapi.Post(t, srv.Server, "/v1beta/models/m:generateContent", `{}`); resp.StatusCode != 404 {
		t.Errorf("status %d for the unary method", resp.StatusCode)
	}
}
