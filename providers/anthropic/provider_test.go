package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/anthropic"
	"github.com/kosong-host/kosong-host/providers/anthropictest"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
)

func newProvider(t *testing.T, srv *anthropictest.Server, mod func(*anthropic.Config)) *anthropic.Provider {
	t.Helper()
	cfg := anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "sk-test", HTTPClient: srv.Client()}
	if mod != nil {
		mod(&cfg)
	}
	p, err := anthropic.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var shellTool = providers.ToolDef{Name: "Shell", Description: "Run a command",
	Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)}

func userRequest(text string) providers.Request {
	return providers.Request{System: "You are a test.", Tools: []providers.ToolDef{shellTool},
		History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart(text)}}}}
}

func TestStream(t *testing.T) {
	tests := []struct {
		name      string
		resp      anthropictest.Response
		text      string
		reasoning string
		calls     []providers.ToolCall
		usage     *providers.Usage
		signature string
	}{
		{name: "text", resp: anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("Hel", "lo")}, Pings: true,
			Usage: &anthropictest.Usage{InputTokens: 10, OutputTokens: 5, CacheReadInputTokens: 100, CacheCreationInputTokens: 7}},
			text: "Hello", usage: &providers.Usage{InputTokens: 117, OutputTokens: 5, CacheReadTokens: 100, CacheCreationTokens: 7}},
		{name: "one tool call", resp: anthropictest.Response{Blocks: []anthropictest.Block{
			anthropictest.ToolUse("toolu_1", "Shell", `{"command": "ls -la"}`, 4)}},
			calls: []providers.ToolCall{{ID: "toolu_1", Name: "Shell", Arguments: `{"command": "ls -la"}`}}},
		{name: "two parallel tool calls", resp: anthropictest.Response{Blocks: []anthropictest.Block{
			anthropictest.Text("Two things."),
			anthropictest.ToolUse("toolu_a", "Shell", `{"command":"ls"}`, 3),
			anthropictest.ToolUse("toolu_b", "ReadFile", `{"path":"go.mod"}`, 0)}},
			text: "Two things.",
			calls: []providers.ToolCall{{ID: "toolu_a", Name: "Shell", Arguments: `{"command":"ls"}`},
				{ID: "toolu_b", Name: "ReadFile", Arguments: `{"path":"go.mod"}`}}},
		{name: "tool call without input", resp: anthropictest.Response{Blocks: []anthropictest.Block{
			anthropictest.ToolUse("toolu_1", "Think", ``, 0)}},
			calls: []providers.ToolCall{{ID: "toolu_1", Name: "Think", Arguments: `{}`}}},
		{name: "thinking", resp: anthropictest.Response{Blocks: []anthropictest.Block{
			anthropictest.Thinking("sig-1", "Let me ", "think."), anthropictest.Text("Done.")}},
			text: "Done.", reasoning: "Let me think.", signature: "sig-1"},
		{name: "thinking and redacted", resp: anthropictest.Response{Blocks: []anthropictest.Block{
			anthropictest.Thinking("sig-1", "Hm."), anthropictest.Redacted("opaque"), anthropictest.Text("Done.")}},
			text: "Done.", reasoning: "Hm.",
			signature: `{"anthropic":[{"type":"thinking","thinking":"Hm.","signature":"sig-1"},{"type":"redacted_thinking","data":"opaque"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := anthropictest.NewServer(t, tt.resp)
			p := newProvider(t, srv, nil)
			s, err := p.Stream(context.Background(), userRequest("hi"))
			if err != nil {
				t.Fatal(err)
			}
			r := streamtest.Drain(s, nil)
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			streamtest.CheckParts(t, r)
			if r.Text != tt.text || r.Reasoning != tt.reasoning || r.Signature != tt.signature {
				t.Errorf("text %q reasoning %q signature %q, want %q %q %q", r.Text, r.Reasoning, r.Signature, tt.text, tt.reasoning, tt.signature)
			}
			if !reflect.DeepEqual(r.Calls, tt.calls) {
				t.Errorf("calls %+v, want %+v", r.Calls, tt.calls)
			}
			if tt.usage != nil && !reflect.DeepEqual(r.Usage, tt.usage) {
				t.Errorf("usage %+v, want %+v", r.Usage, tt.usage)
			}

			req := srv.LastRequest(t)
			m := req.Messages
			if req.Path != "/v1/messages" || m.Model != "claude-sonnet-4-5" || m.MaxTokens != 50000 || !m.Stream {
				t.Errorf("request %s model %q max_tokens %d stream %v", req.Path, m.Model, m.MaxTokens, m.Stream)
			}
			if req.Header.Get("Authorization") != "Bearer sk-test" && req.Header.Get("X-Api-Key") != "sk-test" {
				t.Errorf("no API key in headers %v", req.Header)
			}
			if req.Header.Get("Anthropic-Version") == "" || req.Header.Get("X-Stainless-Retry-Count") != "0" && req.Header.Get("X-Stainless-Retry-Count") != "" {
				t.Errorf("headers %v", req.Header)
			}
			if m.SystemText() != "You are a test." || len(m.Messages) != 1 || m.Messages[0].Role != "user" || m.Messages[0].Text() != "hi" {
				t.Errorf("messages %+v system %q", m.Messages, m.SystemText())
			}
			if len(m.Tools) != 1 || m.Tools[0].Name != "Shell" || len(m.Tools[0].CacheControl) == 0 {
				t.Fatalf("tools %+v", m.Tools)
			}
			var schema map[string]any
			_ = json.Unmarshal(m.Tools[0].InputSchema, &schema)
			if schema["type"] != "object" || schema["additionalProperties"] != false || schema["required"] == nil {
				t.Errorf("input_schema %s", m.Tools[0].InputSchema)
			}
			if len(m.Messages[0].Content[0].CacheControl) == 0 || !strings.Contains(string(m.System), "cache_control") {
				t.Errorf("no cache breakpoints: %s", req.Body)
			}
			if len(m.Thinking) != 0 {
				t.Errorf("thinking sent though off: %s", m.Thinking)
			}
		})
	}
}

// A tool call is handed out as soon as its block stops, before the server
// sends anything else.
func TestToolCallEmittedAtBlockStop(t *testing.T) {
	resp := anthropictest.Response{Blocks: []anthropictest.Block{
		anthropictest.ToolUse("toolu_a", "Shell", `{"command":"sleep 1"}`, 5),
		anthropictest.ToolUse("toolu_b", "Shell", `{"command":"ls"}`, 5)}}
	firstStop := -1
	for i, ev := range anthropictest.Events("m", resp) {
		if ev.Type == "content_block_stop" {
			firstStop = i
			break
		}
	}
	got := make(chan struct{})
	late := make(chan bool, 1)
	resp.AfterEvent = func(ctx context.Context, n int, _ anthropictest.Event) {
		if n != firstStop {
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
	}
	srv := anthropictest.NewServer(t, resp)
	s, err := newProvider(t, srv, nil).Stream(context.Background(), userRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	r := streamtest.Drain(s, func(tc providers.ToolCall) {
		if tc.ID == "toolu_a" {
			close(got)
		}
	})
	if r.Err != nil || len(r.Calls) != 2 {
		t.Fatalf("calls %+v, err %v", r.Calls, r.Err)
	}
	if <-late {
		t.Error("the first tool call was not emitted when its content block stopped")
	}
}

func TestRequestMapping(t *testing.T) {
	history := []providers.Message{
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("look"),
			{Type: providers.PartImage, ImageURL: "data:image/png;base64,iVBORw0KGgo="}}},
		{Role: providers.RoleAssistant, Reasoning: "Let me think.", ReasoningSignature: "sig-1",
			Content: []providers.ContentPart{providers.TextPart("Checking.")},
			ToolCalls: []providers.ToolCall{{ID: "toolu_a", Name: "Shell", Arguments: `{"command":"ls"}`},
				{ID: "toolu_b", Name: "Shell", Arguments: `not json`}}},
		{Role: providers.RoleTool, ToolCallID: "toolu_a", Content: []providers.ContentPart{providers.TextPart("a.txt")}},
		{Role: providers.RoleTool, ToolCallID: "toolu_b", IsError: true, Content: []providers.ContentPart{providers.TextPart("<system>ERROR: bad arguments</system>")}},
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("and?")}},
		{Role: providers.RoleAssistant, Reasoning: "kimi reasoning", ToolCalls: []providers.ToolCall{{ID: "toolu_c", Name: "Shell", Arguments: `{}`}}},
		{Role: providers.RoleTool, ToolCallID: "toolu_c", Content: []providers.ContentPart{providers.TextPart("<system>ERROR: exit 1</system>")}},
		{Role: providers.RoleAssistant, Reasoning: "two blocks",
			ReasoningSignature: `{"anthropic":[{"type":"thinking","thinking":"a","signature":"s-a"},{"type":"redacted_thinking","data":"xyz"}]}`,
			Content:            []providers.ContentPart{providers.TextPart("ok")}},
		{Role: providers.RoleAssistant, ReasoningSignature: `{"gemini":{"text":"abc"}}`, Content: []providers.ContentPart{providers.TextPart("merged")}},
		{Role: providers.RoleSystem, Content: []providers.ContentPart{providers.TextPart("be brief")}},
	}
	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("fine")}})
	p := newProvider(t, srv, func(c *anthropic.Config) { c.ThinkingBudget = 2048; c.MaxTokens = 4096; c.Model = "claude-x" })
	r := streamtest.Drain(mustStream(t, p, providers.Request{History: history}), nil)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	m := srv.LastRequest(t).Messages
	if m.Model != "claude-x" || m.MaxTokens != 4096 || !strings.Contains(string(m.Thinking), `"budget_tokens":2048`) || len(m.System) != 0 {
		t.Errorf("model %s max_tokens %d thinking %s system %s", m.Model, m.MaxTokens, m.Thinking, m.System)
	}
	var roles []string
	for _, msg := range m.Messages {
		roles = append(roles, msg.Role)
	}
	if got := strings.Join(roles, ","); got != "user,assistant,user,assistant,user,assistant,user" {
		t.Fatalf("roles %s", got)
	}
	types := func(msg anthropictest.Message) string {
		var ts []string
		for _, b := range msg.Content {
			ts = append(ts, b.Type)
		}
		return strings.Join(ts, ",")
	}
	want := []string{"text,image", "thinking,text,tool_use,tool_use", "tool_result,tool_result,text",
		"tool_use", "tool_result", "thinking,redacted_thinking,text,text", "text"}
	for i, w := range want {
		if got := types(m.Messages[i]); got != w {
			t.Errorf("message %d blocks %s, want %s", i, got, w)
		}
	}
	a := m.Messages[1].Content
	if a[0].Thinking != "Let me think." || a[0].Signature != "sig-1" || string(a[2].Input) != `{"command":"ls"}` || string(a[3].Input) != `{}` {
		t.Errorf("assistant blocks %+v", a)
	}
	results := m.Messages[2].Content
	if results[0].ToolUseID != "toolu_a" || results[0].IsError != nil || results[0].ResultText() != "a.txt" ||
		results[1].ToolUseID != "toolu_b" || results[1].IsError == nil || !*results[1].IsError || m.Messages[2].Content[2].Text != "and?" {
		t.Errorf("tool results %+v", results)
	}
	if r := m.Messages[4].Content[0]; r.IsError == nil || !*r.IsError {
		t.Errorf("error prefix not sent as is_error: %+v", r)
	}
	if b := m.Messages[5].Content; b[0].Signature != "s-a" || b[1].Data != "xyz" || b[2].Text != "ok" || b[3].Text != "merged" {
		t.Errorf("stored blocks %+v", b)
	}
	if last := m.Messages[6]; last.Content[0].Text != "<system>be brief</system>" || len(last.Content[0].CacheControl) == 0 {
		t.Errorf("last message %+v", last)
	}
	if src := string(m.Messages[0].Content[1].Source); !strings.Contains(src, `"media_type":"image/png"`) || !strings.Contains(src, `"type":"base64"`) {
		t.Errorf("image source %s", src)
	}
}

// The thinking of a response goes back with its signature in the next
// request, as the loop would keep it.
func TestThinkingRoundTrip(t *testing.T) {
	srv := anthropictest.NewServer(t,
		anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Thinking("sig-xyz", "Need ", "ls."),
			anthropictest.ToolUse("toolu_1", "Shell", `{"command":"ls"}`, 0)}},
		anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("Done.")}})
	p := newProvider(t, srv, func(c *anthropic.Config) { c.ThinkingBudget = 1024 })
	req := userRequest("list")
	r := streamtest.Drain(mustStream(t, p, req), nil)
	if r.Err != nil || r.Reasoning != "Need ls." || r.Signature != "sig-xyz" || len(r.Calls) != 1 {
		t.Fatalf("first response %+v", r)
	}
	req.History = append(req.History,
		providers.Message{Role: providers.RoleAssistant, Reasoning: r.Reasoning, ReasoningSignature: r.Signature, ToolCalls: r.Calls},
		providers.Message{Role: providers.RoleTool, ToolCallID: "toolu_1", Content: []providers.ContentPart{providers.TextPart("go.mod")}})
	if r := streamtest.Drain(mustStream(t, p, req), nil); r.Err != nil || r.Text != "Done." {
		t.Fatalf("second response %+v", r)
	}
	a := srv.LastRequest(t).Messages.Messages[1]
	if a.Role != "assistant" || a.Content[0].Type != "thinking" || a.Content[0].Thinking != "Need ls." || a.Content[0].Signature != "sig-xyz" || a.Content[1].Type != "tool_use" {
		t.Errorf("assistant message sent back %+v", a)
	}
}

// With thinking on, a tool-use continuation whose assistant message has no
// signed thinking goes without thinking; a signed one, or a new user turn,
// with it.
func TestThinkingOffForUnsignedToolTurn(t *testing.T) {
	user := providers.Message{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("go")}}
	call := []providers.ToolCall{{ID: "toolu_1", Name: "Shell", Arguments: `{}`}}
	result := providers.Message{Role: providers.RoleTool, ToolCallID: "toolu_1", Content: []providers.ContentPart{providers.TextPart("ok")}}
	tests := []struct {
		name     string
		history  []providers.Message
		thinking bool
	}{
		{"first request", []providers.Message{user}, true},
		{"unsigned tool turn", []providers.Message{user, {Role: providers.RoleAssistant, Reasoning: "r", ToolCalls: call}, result}, false},
		{"signed tool turn", []providers.Message{user, {Role: providers.RoleAssistant, Reasoning: "r", ReasoningSignature: "s", ToolCalls: call}, result}, true},
		{"new user turn", []providers.Message{user, {Role: providers.RoleAssistant, ToolCalls: call}, result,
			{Role: providers.RoleAssistant, Content: []providers.ContentPart{providers.TextPart("done")}}, user}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("ok")}})
			p := newProvider(t, srv, func(c *anthropic.Config) { c.ThinkingBudget = 2048 })
			if r := streamtest.Drain(mustStream(t, p, providers.Request{History: tt.history}), nil); r.Err != nil {
				t.Fatal(r.Err)
			}
			if got := len(srv.LastRequest(t).Messages.Thinking) > 0; got != tt.thinking {
				t.Errorf("thinking sent: %v, want %v", got, tt.thinking)
			}
		})
	}
}

func mustStream(t *testing.T, p providers.ChatProvider, req providers.Request) providers.Stream {
	t.Helper()
	s, err := p.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name      string
		resp      anthropictest.Response
		kind      providers.ErrorKind
		status    int
		retryable bool
		onNext    bool // the error comes from Next, not Stream
		contains  string
	}{
		{name: "401", resp: anthropictest.Response{Status: 401, ErrorMessage: "invalid x-api-key"}, kind: providers.ErrAuth, status: 401,
			contains: "anthropic: authentication error (HTTP 401): invalid x-api-key; check ANTHROPIC_API_KEY"},
		{name: "403", resp: anthropictest.Response{Status: 403}, kind: providers.ErrAuth, status: 403},
		{name: "429", resp: anthropictest.Response{Status: 429, ErrorMessage: "slow down"}, kind: providers.ErrRateLimit, status: 429, retryable: true, contains: "slow down"},
		{name: "500", resp: anthropictest.Response{Status: 500}, kind: providers.ErrServer, status: 500, retryable: true},
		{name: "529 overloaded", resp: anthropictest.Response{Status: 529}, kind: providers.ErrServer, status: 529, retryable: true},
		{name: "400", resp: anthropictest.Response{Status: 400, ErrorMessage: "messages: bad"}, kind: providers.ErrBadRequest, status: 400, contains: "messages: bad"},
		{name: "broken stream", resp: anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("a", "b", "c")}, BreakAfter: 3},
			kind: providers.ErrConnection, retryable: true, onNext: true},
		{name: "no message_stop", resp: anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("a")}, OmitStop: true},
			kind: providers.ErrConnection, retryable: true, onNext: true, contains: "message_stop"},
		{name: "overloaded event", resp: anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("a")}, StreamErrorType: "overloaded_error"},
			kind: providers.ErrServer, retryable: true, onNext: true, contains: "overloaded_error: Overloaded"},
		{name: "rate limit event", resp: anthropictest.Response{StreamErrorType: "rate_limit_error"},
			kind: providers.ErrRateLimit, retryable: true, onNext: true},
		{name: "empty response", resp: anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Thinking("s", "hm")}},
			kind: providers.ErrEmptyResponse, retryable: true, onNext: true},
		{name: "malformed event", resp: anthropictest.Response{RawEvents: []anthropictest.Event{{Type: "message_start", Data: "{nope"}}},
			kind: providers.ErrServer, retryable: true, onNext: true},
		{name: "delta for unknown block", resp: anthropictest.Response{RawEvents: []anthropictest.Event{
			{Type: "content_block_delta", Data: `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`}}},
			kind: providers.ErrServer, retryable: true, onNext: true, contains: "protocol error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := anthropictest.NewServer(t, tt.resp)
			streamtest.CheckError(t, newProvider(t, srv, nil), userRequest("hi"), streamtest.WantError{
				Provider: "anthropic", Kind: tt.kind, Status: tt.status, Retryable: tt.retryable, OnNext: tt.onNext, Contains: tt.contains})
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: the SDK retried", n)
			}
		})
	}
}

// A bearer token (ANTHROPIC_AUTH_TOKEN) goes as Authorization, never as an
// API key.
func TestAuthToken(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("ok")}})
	p := newProvider(t, srv, func(c *anthropic.Config) { c.APIKey, c.AuthToken = "", "tok-1" })
	if r := streamtest.Drain(mustStream(t, p, userRequest("hi")), nil); r.Err != nil || r.Text != "ok" {
		t.Fatalf("stream: %+v", r)
	}
	h := srv.LastRequest(t).Header
	if h.Get("Authorization") != "Bearer tok-1" || h.Get("X-Api-Key") != "" {
		t.Fatalf("headers %v", h)
	}
}

// A 429 is a retryable error; the next attempt (the loop's) succeeds.
func TestRateLimitThenSuccess(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{Status: 429},
		anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("ok")}})
	p := newProvider(t, srv, nil)
	_, err := p.Stream(context.Background(), userRequest("hi"))
	if !providers.IsRetryable(err) {
		t.Fatalf("first attempt: %v, want a retryable error", err)
	}
	if len(srv.Requests()) != 1 {
		t.Fatalf("the SDK retried by itself")
	}
	if r := streamtest.Drain(mustStream(t, p, userRequest("hi")), nil); r.Err != nil || r.Text != "ok" {
		t.Fatalf("second attempt %+v", r)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("a", "b")},
		AfterEvent: func(c context.Context, n int, _ anthropictest.Event) {
			if n == 2 { // the first delta: hold the stream until the client leaves
				<-c.Done()
			}
		}}
	srv := anthropictest.NewServer(t, resp)
	s, err := newProvider(t, srv, nil).Stream(ctx, userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for {
		ev, err := s.Next()
		if ev.Kind == providers.EventText {
			cancel()
			continue
		}
		var pe *providers.Error
		if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
			t.Errorf("error %v, want the context's", err)
		}
		break
	}
	_, err = newProvider(t, srv, nil).Stream(ctx, userRequest("hi"))
	var pe *providers.Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Errorf("Stream with a cancelled context: %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := anthropictest.NewServer(t)
	url := srv.URL
	srv.Close()
	p, err := anthropic.New(anthropic.Config{BaseURL: url, APIKey: "k", Headers: map[string]string{"X-Test": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Stream(context.Background(), userRequest("hi"))
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.ErrConnection {
		t.Errorf("error %v, want a connection error", err)
	}
}

func TestHeadersAndNew(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("ok")}})
	p := newProvider(t, srv, func(c *anthropic.Config) { c.Headers = map[string]string{"X-Team": "blue"} })
	if r := streamtest.Drain(mustStream(t, p, userRequest("hi")), nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	if h := srv.LastRequest(t).Header.Get("X-Team"); h != "blue" {
		t.Errorf("X-Team = %q", h)
	}
	if p.Name() != "anthropic" || p.Model() != anthropic.DefaultModel || p.APIKeyEnv() != "ANTHROPIC_API_KEY" || p.MaxTokens() != 50000 {
		t.Errorf("defaults: %s %s %s %d", p.Name(), p.Model(), p.APIKeyEnv(), p.MaxTokens())
	}
	for _, cfg := range []anthropic.Config{{BaseURL: "ftp://x"}, {ThinkingBudget: 100}, {ThinkingBudget: 60000}} {
		if _, err := anthropic.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestInputSchemaGolden(t *testing.T) {
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
			got, err := anthropic.InputSchema(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got["type"] != "object" {
				t.Errorf("type %v", got["type"])
			}
			for _, k := range []string{"oneOf", "anyOf", "allOf"} {
				if _, ok := got[k]; ok {
					t.Errorf("top-level %s kept", k)
				}
			}
			if !reflect.DeepEqual(got["properties"], orig["properties"]) || !reflect.DeepEqual(got["required"], orig["required"]) {
				t.Errorf("properties or required changed")
			}
		})
	}
}

func TestInputSchema(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{"properties":{},"type":"object"}`},
		{`{"properties":{"a":{"type":"string"}}}`, `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{`{"oneOf":[{"type":"object","properties":{"a":{"type":"string"},"b":{}},"required":["a","b"]},{"type":"object","properties":{"c":{}},"required":["a"]}]}`,
			`{"properties":{"a":{"type":"string"},"b":{},"c":{}},"required":["a"],"type":"object"}`},
		{`{"type":"object","required":["x"],"allOf":[{"properties":{"y":{}},"required":["y"]}]}`,
			`{"properties":{"y":{}},"required":["x","y"],"type":"object"}`},
	}
	for _, tt := range tests {
		got, err := anthropic.InputSchema(json.RawMessage(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got)
		if string(b) != tt.want {
			t.Errorf("InputSchema(%s) = %s, want %s", tt.in, b, tt.want)
		}
	}
	for _, bad := range []string{`[1]`, `{"type":"string"}`, `{`} {
		if _, err := anthropic.InputSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("InputSchema(%s) succeeded", bad)
		}
	}
}

// Close may be called while Next waits for the server.
func TestCloseWhileWaiting(t *testing.T) {
	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{anthropictest.Text("a", "b")},
		AfterEvent: func(c context.Context, n int, _ anthropictest.Event) {
			if n == 2 {
				<-c.Done()
			}
		}})
	streamtest.CheckCloseWhileWaiting(t, mustStream(t, newProvider(t, srv, nil), userRequest("hi")))
}

// A tool_use block is announced by a part when it starts, then each
// input_json_delta is a part of its own.
func TestToolCallPartsFollowDeltas(t *testing.T) {
	args := `{"command":"ls -la /tmp"}`
	srv := anthropictest.NewServer(t, anthropictest.Response{Blocks: []anthropictest.Block{
		anthropictest.ToolUse("toolu_a", "Shell", args, 3)}})
	r := streamtest.Drain(mustStream(t, newProvider(t, srv, nil), userRequest("hi")), nil)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	streamtest.CheckParts(t, r)
	if want := 1 + (len(args)+2)/3; len(r.Parts) != want || r.Parts[0].Arguments != "" {
		t.Errorf("parts %+v, want %d: an empty one announcing the call, then one a delta", r.Parts, want)
	}
}
