package google_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/google"
	"github.com/kosong-host/kosong-host/providers/googletest"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
)

func newProvider(t *testing.T, srv *googletest.Server, mod func(*google.Config)) *google.Provider {
	t.Helper()
	cfg := google.Config{BaseURL: srv.BaseURL(), APIKey: "g-test", HTTPClient: srv.Client()}
	if mod != nil {
		mod(&cfg)
	}
	p, err := google.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustStream(t *testing.T, p providers.ChatProvider, req providers.Request) providers.Stream {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var shellTool = providers.ToolDef{Name: "Shell", Description: "Run a command",
	Parameters: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)}

func userRequest(text string) providers.Request {
	return providers.Request{System: "You are a test.", Tools: []providers.ToolDef{shellTool},
		History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart(text)}}}}
}

func sigJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("signature %q: %v", s, err)
	}
	return m
}

func TestStream(t *testing.T) {
	tests := []struct {
		name      string
		resp      googletest.Response
		text      string
		reasoning string
		calls     []providers.ToolCall
		usage     *providers.Usage
		sigs      string // the signature JSON, "" for none
	}{
		{name: "text", resp: googletest.Response{Text: []string{"Hel", "lo"},
			Usage: &googletest.Usage{PromptTokens: 120, CandidatesTokens: 5, ThoughtsTokens: 30, CachedTokens: 100}},
			text: "Hello", usage: &providers.Usage{InputTokens: 120, OutputTokens: 35, CacheReadTokens: 100}},
		{name: "one tool call", resp: googletest.Response{Calls: []googletest.Call{{Name: "Shell", Args: `{"command":"ls -la"}`}}},
			calls: []providers.ToolCall{{ID: "Shell:0", Name: "Shell", Arguments: `{"command":"ls -la"}`}}},
		{name: "two parallel tool calls in one chunk", resp: googletest.Response{Text: []string{"Two things."}, CallsInOneChunk: true,
			Calls: []googletest.Call{{Name: "Shell", Args: `{"command":"ls"}`, Signature: "sig-call"}, {Name: "ReadFile", Args: `{"path":"go.mod"}`}}},
			text: "Two things.",
			calls: []providers.ToolCall{{ID: "Shell:0", Name: "Shell", Arguments: `{"command":"ls"}`},
				{ID: "ReadFile:1", Name: "ReadFile", Arguments: `{"path":"go.mod"}`}},
			sigs: `{"gemini":{"calls":{"Shell:0":"c2lnLWNhbGw="}}}`},
		{name: "two calls of one function, server ids", resp: googletest.Response{
			Calls: []googletest.Call{{ID: "c1", Name: "Shell", Args: `{"command":"a"}`}, {ID: "c2", Name: "Shell", Args: `{}`}}},
			calls: []providers.ToolCall{{ID: "c1", Name: "Shell", Arguments: `{"command":"a"}`}, {ID: "c2", Name: "Shell", Arguments: `{}`}}},
		{name: "thoughts and signatures", resp: googletest.Response{Thoughts: []string{"Let me ", "think."}, ThoughtSignature: "sig-t",
			Text: []string{"Done."}, TextSignature: "sig-x"},
			text: "Done.", reasoning: "Let me think.", sigs: `{"gemini":{"thought":"c2lnLXQ=","text":"c2lnLXg="}}`},
		{name: "signature on an empty text part", resp: googletest.Response{Calls: []googletest.Call{{Name: "Think", Args: `{"thought":"x"}`}}, TextSignature: "sig-e"},
			calls: []providers.ToolCall{{ID: "Think:0", Name: "Think", Arguments: `{"thought":"x"}`}}, sigs: `{"gemini":{"text":"c2lnLWU="}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := googletest.NewServer(t, tt.resp)
			p := newProvider(t, srv, nil)
			r := streamtest.Drain(mustStream(t, p, userRequest("hi")), nil)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			streamtest.CheckParts(t, r)
			if r.Text != tt.text || r.Reasoning != tt.reasoning {
				t.Errorf("text %q reasoning %q, want %q %q", r.Text, r.Reasoning, tt.text, tt.reasoning)
			}
			if !reflect.DeepEqual(r.Calls, tt.calls) {
				t.Errorf("calls %+v, want %+v", r.Calls, tt.calls)
			}
			if tt.usage != nil && !reflect.DeepEqual(r.Usage, tt.usage) {
				t.Errorf("usage %+v, want %+v", r.Usage, tt.usage)
			}
			if tt.sigs == "" && r.Signature != "" || tt.sigs != "" && !reflect.DeepEqual(sigJSON(t, r.Signature), sigJSON(t, tt.sigs)) {
				t.Errorf("signature %s, want %s", r.Signature, tt.sigs)
			}

			req := srv.LastRequest(t)
			g := req.Generate
			if req.Model != "gemini-3-pro-preview" || req.Header.Get("X-Goog-Api-Key") != "g-test" {
				t.Errorf("model %q, key header %q", req.Model, req.Header.Get("X-Goog-Api-Key"))
			}
			if g.SystemInstruction == nil || g.SystemInstruction.Text() != "You are a test." {
				t.Errorf("system instruction %+v", g.SystemInstruction)
			}
			if len(g.Contents) != 1 || g.Contents[0].Role != "user" || g.Contents[0].Text() != "hi" {
				t.Errorf("contents %+v", g.Contents)
			}
			if gc := g.GenerationConfig; gc == nil || gc.ThinkingConfig == nil || gc.ThinkingConfig.ThinkingLevel != "HIGH" || !gc.ThinkingConfig.IncludeThoughts {
				t.Errorf("generation config %s", req.Body)
			}
			if len(g.Tools) != 1 || len(g.Tools[0].FunctionDeclarations) != 1 {
				t.Fatalf("tools %+v", g.Tools)
			}
			params := string(g.Tools[0].FunctionDeclarations[0].Parameters)
			if !strings.Contains(params, `"type":"OBJECT"`) || strings.Contains(params, "additionalProperties") || strings.Contains(params, "$schema") {
				t.Errorf("parameters %s", params)
			}
		})
	}
}

// Function calls are emitted as each chunk arrives, not at the end.
func TestCallEmittedWithItsChunk(t *testing.T) {
	got := make(chan struct{})
	late := make(chan bool, 1)
	resp := googletest.Response{Calls: []googletest.Call{{Name: "Shell", Args: `{"command":"a"}`}, {Name: "Shell", Args: `{"command":"b"}`}},
		AfterChunk: func(ctx context.Context, n int, _ string) {
			if n != 0 {
				return
			}
			select {
			case <-got:
				late <- false
			case <-ctx.Done():
				late <- true
			case <-time.After(10 * time.Second): // a guard against a hang, not synchronisation
				late <- true
			}
		}}
	srv := googletest.NewServer(t, resp)
	r := streamtest.Drain(mustStream(t, newProvider(t, srv, nil), userRequest("go")), func(tc providers.ToolCall) {
		if tc.ID == "Shell:0" {
			close(got)
		}
	})
	if r.Err != nil || len(r.Calls) != 2 {
		t.Fatalf("calls %+v err %v", r.Calls, r.Err)
	}
	if <-late {
		t.Error("the first call was not emitted when its chunk arrived")
	}
}

func TestRequestMapping(t *testing.T) {
	history := []providers.Message{
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("look"),
			{Type: providers.PartImage, ImageURL: "data:image/png;base64,aGk="}}},
		{Role: providers.RoleAssistant, Reasoning: "Let me think.",
			ReasoningSignature: `{"gemini":{"thought":"c2lnLXQ=","calls":{"Shell:0":"c2lnLWM="}}}`,
			Content:            []providers.ContentPart{providers.TextPart("Checking.")},
			ToolCalls: []providers.ToolCall{{ID: "Shell:0", Name: "Shell", Arguments: `{"command":"ls","n":12345678901}`},
				{ID: "srv-id", Name: "ReadFile", Arguments: `not json`}}},
		{Role: providers.RoleTool, ToolCallID: "Shell:0", Content: []providers.ContentPart{providers.TextPart("a.txt"),
			{Type: providers.PartImage, ImageURL: "data:image/png;base64,aW1n"}}},
		{Role: providers.RoleTool, ToolCallID: "srv-id", IsError: true, Content: []providers.ContentPart{providers.TextPart("<system>ERROR: no such file</system>")}},
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("and?")}},
		// From another provider: no Gemini signature, an OpenAI-style id.
		{Role: providers.RoleAssistant, Reasoning: "kimi thoughts", ReasoningSignature: "anthropic-sig",
			ToolCalls: []providers.ToolCall{{ID: "call_abc", Name: "Shell", Arguments: `{}`}, {ID: "call_def", Name: "Shell", Arguments: `{}`}}},
		{Role: providers.RoleTool, ToolCallID: "call_abc", Content: []providers.ContentPart{providers.TextPart("<system>ERROR: exit 1</system>")}},
		{Role: providers.RoleTool, ToolCallID: "call_def", Content: []providers.ContentPart{providers.TextPart("")}},
		{Role: providers.RoleSystem, Content: []providers.ContentPart{providers.TextPart("be brief")}},
	}
	srv := googletest.NewServer(t, googletest.Response{Text: []string{"fine"}})
	p := newProvider(t, srv, func(c *google.Config) { c.MaxTokens = 1000; c.ThinkingLevel = "low" })
	if r := streamtest.Drain(mustStream(t, p, providers.Request{History: history}), nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	g := srv.LastRequest(t).Generate
	if g.SystemInstruction != nil || g.Tools != nil || g.GenerationConfig.MaxOutputTokens != 1000 || g.GenerationConfig.ThinkingConfig.ThinkingLevel != "LOW" {
		t.Errorf("request %s", srv.LastRequest(t).Body)
	}
	var roles []string
	for _, c := range g.Contents {
		roles = append(roles, c.Role)
	}
	if got := strings.Join(roles, ","); got != "user,model,user,model,user" {
		t.Fatalf("roles %s", got)
	}
	u := g.Contents[0].Parts
	if u[0].Text != "look" || u[1].InlineData == nil || u[1].InlineData.MIMEType != "image/png" || string(u[1].InlineData.Data) != "hi" {
		t.Errorf("user parts %+v", u)
	}
	m := g.Contents[1].Parts
	if len(m) != 4 || !m[0].Thought || m[0].Text != "Let me think." || string(m[0].ThoughtSignature) != "sig-t" ||
		m[1].Text != "Checking." || m[1].ThoughtSignature != nil ||
		m[2].FunctionCall.Name != "Shell" || m[2].FunctionCall.ID != "" || string(m[2].ThoughtSignature) != "sig-c" ||
		string(m[2].FunctionCall.Args) != `{"command":"ls","n":12345678901}` ||
		m[3].FunctionCall.ID != "srv-id" || len(m[3].FunctionCall.Args) != 0 && string(m[3].FunctionCall.Args) != `{}` || m[3].ThoughtSignature != nil {
		t.Errorf("model parts %s", mustJSON(m))
	}
	res := g.Contents[2].Parts
	if len(res) != 3 || res[0].FunctionResponse.Name != "Shell" || res[0].FunctionResponse.ID != "" || res[0].FunctionResponse.Response["output"] != "a.txt" ||
		res[1].FunctionResponse.Name != "ReadFile" || res[1].FunctionResponse.ID != "srv-id" || res[1].FunctionResponse.Response["error"] != "<system>ERROR: no such file</system>" ||
		res[2].Text != "and?" {
		t.Errorf("function responses %s", mustJSON(res))
	}
	if media := res[0].FunctionResponse.Parts; len(media) != 1 || media[0].InlineData == nil ||
		media[0].InlineData.MIMEType != "image/png" || string(media[0].InlineData.Data) != "img" {
		t.Errorf("function response media %s", mustJSON(res[0].FunctionResponse))
	}
	other := g.Contents[3].Parts
	if len(other) != 2 || other[0].Thought || string(other[0].ThoughtSignature) != google.SkipSignature || other[1].ThoughtSignature != nil || other[0].FunctionCall.ID != "call_abc" {
		t.Errorf("foreign model parts %s", mustJSON(other))
	}
	last := g.Contents[4].Parts
	if last[0].FunctionResponse.Response["error"] == nil || last[1].FunctionResponse.Response["output"] != "" || last[2].Text != "<system>be brief</system>" {
		t.Errorf("last content %s", mustJSON(last))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestUnknownCallID(t *testing.T) {
	srv := googletest.NewServer(t)
	p := newProvider(t, srv, nil)
	_, err := p.Stream(context.Background(), providers.Request{History: []providers.Message{
		{Role: providers.RoleTool, ToolCallID: "nope", Content: []providers.ContentPart{providers.TextPart("x")}}}})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.ErrBadRequest || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("error %v", err)
	}
	if len(srv.Requests()) != 0 {
		t.Error("a request was sent")
	}
}

// A response's signatures and thoughts go back on the parts they came on.
func TestThoughtSignatureRoundTrip(t *testing.T) {
	srv := googletest.NewServer(t,
		googletest.Response{Thoughts: []string{"Need ls."}, ThoughtSignature: "sig-t",
			Calls: []googletest.Call{{Name: "Shell", Args: `{"command":"ls"}`, Signature: "sig-c"}, {Name: "Shell", Args: `{"command":"pwd"}`}}},
		googletest.Response{Text: []string{"Done."}})
	p := newProvider(t, srv, nil)
	req := userRequest("list")
	r := streamtest.Drain(mustStream(t, p, req), nil)
	if r.Err != nil || r.Reasoning != "Need ls." || len(r.Calls) != 2 || r.Signature == "" {
		t.Fatalf("first response %+v", r)
	}
	req.History = append(req.History,
		providers.Message{Role: providers.RoleAssistant, Reasoning: r.Reasoning, ReasoningSignature: r.Signature, ToolCalls: r.Calls},
		providers.Message{Role: providers.RoleTool, ToolCallID: r.Calls[0].ID, Content: []providers.ContentPart{providers.TextPart("go.mod")}},
		providers.Message{Role: providers.RoleTool, ToolCallID: r.Calls[1].ID, IsError: true, Content: []providers.ContentPart{providers.TextPart("denied")}})
	if r := streamtest.Drain(mustStream(t, p, req), nil); r.Err != nil || r.Text != "Done." {
		t.Fatalf("second response %+v", r)
	}
	g := srv.LastRequest(t).Generate
	m := g.Contents[1]
	if m.Role != "model" || len(m.Parts) != 3 || !m.Parts[0].Thought || string(m.Parts[0].ThoughtSignature) != "sig-t" ||
		string(m.Parts[1].ThoughtSignature) != "sig-c" || m.Parts[2].ThoughtSignature != nil {
		t.Errorf("model content sent back %s", mustJSON(m))
	}
	fr := g.Contents[2].Parts
	if len(fr) != 2 || fr[0].FunctionResponse.Name != "Shell" || fr[0].FunctionResponse.Response["output"] != "go.mod" ||
		fr[1].FunctionResponse.Response["error"] != "denied" {
		t.Errorf("function responses %s", mustJSON(fr))
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name      string
		resp      googletest.Response
		kind      providers.ErrorKind
		status    int
		retryable bool
		onNext    bool
		contains  string
	}{
		{name: "401", resp: googletest.Response{Status: 401}, kind: providers.ErrAuth, status: 401, contains: "; check GOOGLE_API_KEY"},
		{name: "400 bad key", resp: googletest.Response{Status: 400, ErrorMessage: "API key not valid. Please pass a valid API key.", ErrorReason: "API_KEY_INVALID"},
			kind: providers.ErrAuth, status: 400, contains: "google: authentication error (HTTP 400): INVALID_ARGUMENT: API key not valid. Please pass a valid API key.; check GOOGLE_API_KEY"},
		{name: "403", resp: googletest.Response{Status: 403}, kind: providers.ErrAuth, status: 403},
		{name: "429", resp: googletest.Response{Status: 429, ErrorMessage: "Resource has been exhausted"}, kind: providers.ErrRateLimit, status: 429, retryable: true, contains: "RESOURCE_EXHAUSTED"},
		{name: "500", resp: googletest.Response{Status: 500}, kind: providers.ErrServer, status: 500, retryable: true},
		{name: "503", resp: googletest.Response{Status: 503}, kind: providers.ErrServer, status: 503, retryable: true},
		{name: "400", resp: googletest.Response{Status: 400, ErrorMessage: "Invalid JSON payload"}, kind: providers.ErrBadRequest, status: 400, contains: "Invalid JSON payload"},
		{name: "broken stream", resp: googletest.Response{Text: []string{"a", "b", "c"}, BreakAfter: 2},
			kind: providers.ErrConnection, retryable: true, onNext: true},
		{name: "broken before the first chunk", resp: googletest.Response{RawChunks: []string{}, BreakAfter: 1},
			kind: providers.ErrConnection, retryable: true},
		{name: "no finish reason", resp: googletest.Response{Text: []string{"a"}, OmitFinish: true},
			kind: providers.ErrConnection, retryable: true, onNext: true, contains: "no finish reason"},
		{name: "error in stream", resp: googletest.Response{Text: []string{"a"}, StreamErrorCode: 500},
			kind: providers.ErrServer, status: 500, retryable: true, onNext: true, contains: "stream failed"},
		{name: "rate limit in stream", resp: googletest.Response{Text: []string{"a"}, StreamErrorCode: 429},
			kind: providers.ErrRateLimit, status: 429, retryable: true, onNext: true},
		{name: "empty response", resp: googletest.Response{Thoughts: []string{"hm"}, FinishReason: "MALFORMED_FUNCTION_CALL"},
			kind: providers.ErrEmptyResponse, retryable: true, onNext: true, contains: "MALFORMED_FUNCTION_CALL"},
		{name: "blocked prompt", resp: googletest.Response{RawChunks: []string{`{"promptFeedback":{"blockReason":"SAFETY"}}`}},
			kind: providers.ErrBadRequest, onNext: true, contains: "SAFETY"},
		{name: "malformed chunk", resp: googletest.Response{RawChunks: []string{`{"candidates": [`}},
			kind: providers.ErrServer, retryable: true, contains: "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := googletest.NewServer(t, tt.resp)
			streamtest.CheckError(t, newProvider(t, srv, nil), userRequest("hi"), streamtest.WantError{
				Provider: "google", Kind: tt.kind, Status: tt.status, Retryable: tt.retryable, OnNext: tt.onNext, Contains: tt.contains})
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: the SDK retried or resumed", n)
			}
		})
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	srv := googletest.NewServer(t, googletest.Response{Status: 429}, googletest.Response{Text: []string{"ok"}})
	p := newProvider(t, srv, nil)
	_, err := p.Stream(context.Background(), userRequest("hi"))
	if !providers.IsRetryable(err) {
		t.Fatalf("first attempt: %v, want a retryable error", err)
	}
	if len(srv.Requests()) != 1 {
		t.Fatal("the SDK retried by itself")
	}
	if r := streamtest.Drain(mustStream(t, p, userRequest("hi")), nil); r.Err != nil || r.Text != "ok" {
		t.Fatalf("second attempt %+v", r)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := googletest.NewServer(t, googletest.Response{Text: []string{"a", "b"},
		AfterChunk: func(c context.Context, n int, _ string) {
			if n == 0 {
				<-c.Done()
			}
		}})
	s, err := newProvider(t, srv, nil).Stream(ctx, userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var pe *providers.Error
	for {
		ev, err := s.Next()
		if ev.Kind == providers.EventText {
			cancel()
			continue
		}
		if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
			t.Errorf("error %v, want the context's", err)
		}
		break
	}
	if _, err := newProvider(t, srv, nil).Stream(ctx, userRequest("hi")); !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Errorf("Stream with a cancelled context: %v", err)
	}
}

// Close may be called while Next waits for the server.
func TestCloseWhileWaiting(t *testing.T) {
	srv := googletest.NewServer(t, googletest.Response{Text: []string{"a", "b"},
		AfterChunk: func(c context.Context, n int, _ string) {
			if n == 0 {
				<-c.Done()
			}
		}})
	streamtest.CheckCloseWhileWaiting(t, mustStream(t, newProvider(t, srv, nil), userRequest("hi")))
}

func TestNew(t *testing.T) {
	p, err := google.New(google.Config{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "google" || p.Model() != "gemini-3-pro-preview" || p.ThinkingLevel() != "high" || p.APIKeyEnv() != "GOOGLE_API_KEY" || p.BaseURL() != google.DefaultBaseURL {
		t.Errorf("defaults %s %s %s %s", p.Name(), p.Model(), p.ThinkingLevel(), p.APIKeyEnv())
	}
	if p, _ := google.New(google.Config{APIKey: "k", Model: "gemini-2.5-flash"}); p.ThinkingLevel() != "" {
		t.Errorf("thinking level %q for gemini-2.5", p.ThinkingLevel())
	}
	if p, _ := google.New(google.Config{APIKey: "k", ThinkingLevel: "off"}); p.ThinkingLevel() != "" {
		t.Errorf("thinking level %q for off", p.ThinkingLevel())
	}
	for _, cfg := range []google.Config{{BaseURL: "nope"}, {ThinkingLevel: "extreme"}} {
		if _, err := google.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestHeaders(t *testing.T) {
	srv := googletest.NewServer(t, googletest.Response{Text: []string{"ok"}})
	p := newProvider(t, srv, func(c *google.Config) { c.Headers = map[string]string{"X-Team": "blue"}; c.Model = "gemini-2.5-pro" })
	if r := streamtest.Drain(mustStream(t, p, userRequest("hi")), nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	req := srv.LastRequest(t)
	if req.Header.Get("X-Team") != "blue" || req.Model != "gemini-2.5-pro" || req.Generate.GenerationConfig != nil && req.Generate.GenerationConfig.ThinkingConfig != nil {
		t.Errorf("headers %v model %s body %s", req.Header, req.Model, req.Body)
	}
}

// allowedKeys are the genai.Schema fields Gemini accepts.
var allowedKeys = map[string]bool{"type": true, "format": true, "title": true, "description": true, "nullable": true, "enum": true,
	"maxItems": true, "minItems": true, "properties": true, "required": true, "minProperties": true, "maxProperties": true,
	"minLength": true, "maxLength": true, "pattern": true, "example": true, "anyOf": true, "propertyOrdering": true,
	"default": true, "items": true, "minimum": true, "maximum": true}

func checkSchema(t *testing.T, where string, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s: not an object", where)
		return
	}
	for k, sub := range m {
		if !allowedKeys[k] {
			t.Errorf("%s: key %q not in Gemini's subset", where, k)
		}
		switch k {
		case "type":
			if s, _ := sub.(string); s != strings.ToUpper(s) || s == "" {
				t.Errorf("%s: type %v", where, sub)
			}
		case "properties":
			props, _ := sub.(map[string]any)
			if len(props) == 0 {
				t.Errorf("%s: empty properties", where)
			}
			for name, p := range props {
				checkSchema(t, where+"."+name, p)
			}
		case "items":
			checkSchema(t, where+"[]", sub)
		case "anyOf":
			for i, b := range sub.([]any) {
				checkSchema(t, where+".anyOf"+string(rune('0'+i)), b)
			}
		}
	}
}

func TestSchemaGolden(t *testing.T) {
	files, _ := filepath.Glob("../../plugins/*/testdata/*.schema.json")
	if len(files) < 10 {
		t.Fatalf("found %d golden schemas", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var orig map[string]any
			_ = json.Unmarshal(raw, &orig)
			s, err := google.Schema(raw)
			if err != nil || s == nil {
				t.Fatalf("Schema = %v, %v", s, err)
			}
			b, _ := json.Marshal(s)
			var got map[string]any
			_ = json.Unmarshal(b, &got)
			checkSchema(t, "parameters", got)
			if got["type"] != "OBJECT" {
				t.Errorf("type %v", got["type"])
			}
			var origNames, gotNames []string
			for k := range orig["properties"].(map[string]any) {
				origNames = append(origNames, k)
			}
			for k := range got["properties"].(map[string]any) {
				gotNames = append(gotNames, k)
			}
			sort.Strings(origNames)
			sort.Strings(gotNames)
			if !reflect.DeepEqual(origNames, gotNames) || !reflect.DeepEqual(orig["required"], got["required"]) {
				t.Errorf("properties %v required %v, want %v %v", gotNames, got["required"], origNames, orig["required"])
			}
		})
	}
}

func TestSchema(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", ``, `null`},
		{"no properties", `{"type":"object","properties":{}}`, `null`},
		{"StrReplaceFile oneOf", `{"type":"object","properties":{"edit":{"description":"d","oneOf":[{"type":"object","properties":{"old":{"type":"string"}},"required":["old"],"additionalProperties":false},{"type":"array","minItems":1,"items":{"type":"object","properties":{"old":{"type":"string"}}}}]}}}`,
			`{"properties":{"edit":{"anyOf":[{"properties":{"old":{"type":"STRING"}},"required":["old"],"type":"OBJECT"},{"items":{"properties":{"old":{"type":"STRING"}},"type":"OBJECT"},"minItems":1,"type":"ARRAY"}],"description":"d"}},"type":"OBJECT"}`},
		{"nullable type list", `{"properties":{"a":{"type":["string","null"],"format":"uri","enum":["x","y"]}}}`,
			`{"properties":{"a":{"enum":["x","y"],"nullable":true,"type":"STRING"}},"type":"OBJECT"}`},
		{"anyOf with null", `{"properties":{"a":{"description":"d","anyOf":[{"type":"integer","format":"int64"},{"type":"null"}]}}}`,
			`{"properties":{"a":{"description":"d","format":"int64","nullable":true,"type":"INTEGER"}},"type":"OBJECT"}`},
		{"two types", `{"properties":{"a":{"type":["string","integer"]}}}`,
			`{"properties":{"a":{"anyOf":[{"type":"STRING"},{"type":"INTEGER"}]}},"type":"OBJECT"}`},
		{"refs and allOf", `{"$defs":{"P":{"type":"object","properties":{"x":{"type":"number","exclusiveMinimum":0}},"required":["x"]}},"type":"object","properties":{"p":{"$ref":"#/$defs/P"},"q":{"allOf":[{"$ref":"#/$defs/P"},{"properties":{"y":{"const":"c"}},"required":["y"]}]}},"required":["p","ghost"]}`,
			`{"properties":{"p":{"properties":{"x":{"type":"NUMBER"}},"required":["x"],"type":"OBJECT"},"q":{"properties":{"x":{"type":"NUMBER"},"y":{"enum":["c"],"type":"STRING"}},"required":["x","y"],"type":"OBJECT"}},"required":["p"],"type":"OBJECT"}`},
		{"free-form object and numeric enum", `{"type":"object","properties":{"m":{"type":"object","description":"any map","additionalProperties":true},"n":{"type":"integer","enum":[1,2]},"l":{"type":"array"}}}`,
			`{"properties":{"l":{"items":{"type":"STRING"},"type":"ARRAY"},"m":{"description":"any map"},"n":{"type":"INTEGER"}},"type":"OBJECT"}`},
		{"recursive ref", `{"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}},"type":"object","properties":{"n":{"$ref":"#/$defs/N"}}}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := google.Schema(json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(s)
			if tt.want != "" && string(b) != tt.want {
				t.Errorf("Schema =\n%s\nwant\n%s", b, tt.want)
			}
		})
	}
	for _, bad := range []string{`[1]`, `{"type":"string"}`} {
		if _, err := google.Schema(json.RawMessage(bad)); err == nil {
			t.Errorf("Schema(%s) succeeded", bad)
		}
	}
}
