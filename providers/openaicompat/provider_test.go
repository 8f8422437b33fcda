package openaicompat_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
	"github.com/kosong-host/kosong-host/providers/openaicompat"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

const model = "test-model"

func newProvider(t *testing.T, srv *openaitest.Server) *openaicompat.Provider {
	t.Helper()
	p, err := openaicompat.New(openaicompat.Config{
		Name:       "kimi",
		BaseURL:    srv.BaseURL(),
		APIKey:     "sk-test",
		Model:      model,
		HTTPClient: srv.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testCtx bounds a test so that a bug shows up as a failure, not a hang.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func run(t *testing.T, p providers.ChatProvider, req providers.Request) streamtest.Result {
	t.Helper()
	s, err := p.Stream(testCtx(t), req)
	if err != nil {
		return streamtest.Result{Err: err}
	}
	return streamtest.Drain(s, nil)
}

var userHello = providers.Request{History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi")}}}}

func threeCalls() []openaitest.ToolCall {
	return []openaitest.ToolCall{
		{ID: "call_a", Name: "Shell", Arguments: `{"command":"ls -la /tmp"}`},
		{ID: "call_b", Name: "ReadFile", Arguments: `{"path":"README.md","line_offset":1}`},
		{ID: "call_c", Name: "Glob", Arguments: `{"pattern":"**/*.go"}`},
	}
}

func TestStreamQuirks(t *testing.T) {
	tests := []struct {
		name   string
		quirks openaitest.Quirks
		calls  []openaitest.ToolCall
	}{
		{"tidy", openaitest.Quirks{}, nil},
		{"split arguments", openaitest.Quirks{SplitArguments: 3}, nil},
		{"arguments with the name", openaitest.Quirks{ArgumentsWithName: true, SplitArguments: 5}, nil},
		{"name in a later fragment", openaitest.Quirks{NameLater: true, SplitArguments: 4}, nil},
		{"name later with arguments", openaitest.Quirks{NameLater: true, ArgumentsWithName: true, SplitArguments: 4}, nil},
		{"two fragments per chunk", openaitest.Quirks{TwoFragmentsPerChunk: true, SplitArguments: 3}, nil},
		{"interleaved parallel calls", openaitest.Quirks{Interleave: true, SplitArguments: 3}, nil},
		{"interleaved, name later", openaitest.Quirks{Interleave: true, NameLater: true, SplitArguments: 2}, nil},
		{"first index 1", openaitest.Quirks{FirstIndexOne: true, SplitArguments: 4}, nil},
		{"missing index", openaitest.Quirks{MissingIndex: true, SplitArguments: 4}, nil},
		{"missing index, two per chunk", openaitest.Quirks{MissingIndex: true, TwoFragmentsPerChunk: true, SplitArguments: 4}, nil},
		{"finish_reason on every chunk", openaitest.Quirks{FinishEveryChunk: true, SplitArguments: 3}, nil},
		{"finish_reason on every chunk, interleaved", openaitest.Quirks{FinishEveryChunk: true, Interleave: true, SplitArguments: 3}, nil},
		{"content null chunks", openaitest.Quirks{NullContent: true, SplitArguments: 5}, nil},
		{"comment lines beyond go-openai's limit", openaitest.Quirks{Comments: 400, SplitArguments: 6}, nil},
		{"usage in choices[0]", openaitest.Quirks{UsageInChoice: true}, nil},
		{"kimi ids", openaitest.Quirks{KimiIDs: true, SplitArguments: 4}, []openaitest.ToolCall{
			{Name: "Shell", Arguments: `{"command":"ls"}`},
			{Name: "Shell", Arguments: `{"command":"pwd"}`},
			{Name: "ReadFile", Arguments: `{"path":"a.txt"}`},
		}},
		{"ids omitted", openaitest.Quirks{OmitIDs: true, SplitArguments: 4}, nil},
		{"ids and index omitted", openaitest.Quirks{OmitIDs: true, MissingIndex: true, SplitArguments: 4}, nil},
		{"everything at once", openaitest.Quirks{
			SplitArguments: 2, ArgumentsWithName: true, NameLater: true, Interleave: true, FirstIndexOne: true,
			FinishEveryChunk: true, NullContent: true, Comments: 3, UsageInChoice: true, KimiIDs: true,
		}, []openaitest.ToolCall{
			{Name: "Shell", Arguments: `{"command":"echo hi"}`},
			{Name: "ReadFile", Arguments: `{"path":"x"}`},
		}},
		{"empty arguments", openaitest.Quirks{}, []openaitest.ToolCall{{ID: "call_x", Name: "Now", Arguments: ""}, {ID: "call_y", Name: "Now", Arguments: "{}"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := tt.calls
			if calls == nil {
				calls = threeCalls()
			}
			resp := openaitest.Response{
				Reasoning: []string{"Let me ", "think."},
				Text:      []string{"I will ", "look."},
				ToolCalls: calls,
				Usage:     &openaitest.Usage{PromptTokens: 120, CompletionTokens: 30, CachedTokens: 100},
				Quirks:    tt.quirks,
			}
			srv := openaitest.NewServer(t, resp)
			r := run(t, newProvider(t, srv), userHello)
			if r.Err != nil {
				t.Fatalf("stream error: %v", r.Err)
			}
			streamtest.CheckParts(t, r)
			if r.Reasoning != "Let me think." || r.Text != "I will look." {
				t.Errorf("reasoning %q, text %q", r.Reasoning, r.Text)
			}
			if len(r.Calls) != len(calls) {
				t.Fatalf("got %d tool calls, want %d: %+v", len(r.Calls), len(calls), r.Calls)
			}
			seen := map[string]bool{}
			for i, got := range r.Calls {
				want := calls[i]
				if wantID := openaitest.ToolCallID(resp, i); wantID != "" {
					if got.ID != wantID {
						t.Errorf("call %d id = %q, want %q (verbatim)", i, got.ID, wantID)
					}
				} else if !strings.HasPrefix(got.ID, "call_") {
					t.Errorf("call %d generated id = %q, want call_...", i, got.ID)
				}
				if seen[got.ID] {
					t.Errorf("id %q used twice", got.ID)
				}
				seen[got.ID] = true
				if got.Name != want.Name || got.Arguments != want.Arguments {
					t.Errorf("call %d = %s(%s), want %s(%s)", i, got.Name, got.Arguments, want.Name, want.Arguments)
				}
			}
			want := providers.Usage{InputTokens: 120, OutputTokens: 30, CacheReadTokens: 100}
			if r.Usage == nil || *r.Usage != want {
				t.Errorf("usage = %+v, want %+v", r.Usage, want)
			}
			// Usage, then the stop reason, end the response.
			if n := len(r.Events); n < 2 || r.Events[n-2].Kind != providers.EventUsage ||
				r.Events[n-1].Kind != providers.EventStop || r.Events[n-1].Stop != providers.StopToolUse {
				t.Errorf("last events %+v, want usage then stop tool_use", r.Events[max(0, n-2):])
			}
			if k := r.Events[0].Kind; k != providers.EventReasoning {
				t.Errorf("first event kind = %v, want reasoning", k)
			}
		})
	}
}

// firstChunkWith is the number of the first chunk containing s.
func firstChunkWith(t *testing.T, resp openaitest.Response, s string) int {
	t.Helper()
	for i, c := range openaitest.Chunks(model, resp) {
		if strings.Contains(c, s) {
			return i
		}
	}
	t.Fatalf("no chunk contains %s", s)
	return -1
}

// A call is emitted as soon as the next one starts, not at the end of the
// stream: the server stops after the first fragment of call_b until the
// test has received call_a.
func TestToolCallEmittedBeforeStreamEnd(t *testing.T) {
	for _, quirks := range []openaitest.Quirks{
		{SplitArguments: 3},
		{SplitArguments: 3, MissingIndex: true},
		{SplitArguments: 3, NameLater: true, NullContent: true, Comments: 2},
	} {
		resp := openaitest.Response{ToolCalls: threeCalls()[:2], Quirks: quirks}
		gate := firstChunkWith(t, resp, `"id":"call_b"`)
		gotA := make(chan struct{})
		resp.AfterChunk = func(ctx context.Context, n int, _ string) {
			if n == gate {
				select {
				case <-gotA:
				case <-ctx.Done():
				}
			}
		}
		srv := openaitest.NewServer(t, resp)
		s, err := newProvider(t, srv).Stream(testCtx(t), userHello)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := s.Next()
		for err == nil && ev.Kind == providers.EventToolCallPart {
			ev, err = s.Next()
		}
		if err != nil {
			t.Fatalf("%+v: waiting for call_a: %v (not emitted before the stream ended?)", quirks, err)
		}
		if ev.Kind != providers.EventToolCall || ev.ToolCall.ID != "call_a" || ev.ToolCall.Arguments != `{"command":"ls -la /tmp"}` {
			t.Fatalf("first event = %+v %+v, want complete call_a", ev, ev.ToolCall)
		}
		close(gotA)
		r := streamtest.Drain(s, nil)
		if r.Err != nil || len(r.Calls) != 1 || r.Calls[0].ID != "call_b" {
			t.Fatalf("rest = %+v, err %v", r.Calls, r.Err)
		}
	}
}

// With interleaved fragments the first call is complete only when its
// arguments are; it is still emitted first.
func TestInterleavedEmitsInOrderWhenComplete(t *testing.T) {
	calls := []openaitest.ToolCall{
		{ID: "call_long", Name: "Shell", Arguments: `{"command":"a very long command line"}`},
		{ID: "call_short", Name: "Shell", Arguments: `{"c":1}`},
	}
	srv := openaitest.NewServer(t, openaitest.Response{ToolCalls: calls, Quirks: openaitest.Quirks{Interleave: true, SplitArguments: 4}})
	r := run(t, newProvider(t, srv), userHello)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if len(r.Calls) != 2 || r.Calls[0].ID != "call_long" || r.Calls[0].Arguments != calls[0].Arguments ||
		r.Calls[1].ID != "call_short" || r.Calls[1].Arguments != calls[1].Arguments {
		t.Fatalf("calls = %+v", r.Calls)
	}
}

func chunk(delta string) string {
	return `{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

const finishChunk = `{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`

func TestRawStreams(t *testing.T) {
	tests := []struct {
		name      string
		chunks    []string
		wantCalls []providers.ToolCall
		wantText  string
		wantUsage *providers.Usage
		wantKind  providers.ErrorKind // 0: success
	}{
		{
			name: "index reused with new ids",
			chunks: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"X","arguments":"{}"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"id":"b","function":{"name":"Y","arguments":"{\"k\":"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}`),
				finishChunk,
			},
			wantCalls: []providers.ToolCall{{ID: "a", Name: "X", Arguments: "{}"}, {ID: "b", Name: "Y", Arguments: `{"k":1}`}},
		},
		{
			name: "arguments as an object",
			chunks: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"X","arguments":{"k":1}}}]}`),
				finishChunk,
			},
			wantCalls: []providers.ToolCall{{ID: "a", Name: "X", Arguments: `{"k":1}`}},
		},
		{
			name: "invalid arguments still emitted at the end",
			chunks: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"X","arguments":"{\"k\":"}}]}`),
				finishChunk,
			},
			wantCalls: []providers.ToolCall{{ID: "a", Name: "X", Arguments: `{"k":`}},
		},
		{
			name: "kimi usage with cached_tokens and no [DONE]",
			chunks: []string{
				chunk(`{"content":"hi"}`),
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11,"cached_tokens":8}}]}`,
			},
			wantText:  "hi",
			wantUsage: &providers.Usage{InputTokens: 9, OutputTokens: 2, CacheReadTokens: 8},
		},
		{
			name: "reasoning field",
			chunks: []string{
				chunk(`{"reasoning":"hmm"}`),
				chunk(`{"content":"ok"}`),
				finishChunk,
			},
			wantText: "ok",
		},
		{
			name: "fragment after the call was complete",
			chunks: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"X","arguments":"{}"}}]}`),
				chunk(`{"tool_calls":[{"index":1,"id":"b","function":{"name":"Y","arguments":"{}"}}]}`),
				chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"more\":1}"}}]}`),
				finishChunk,
			},
			wantKind: providers.ErrServer,
		},
		{
			name: "arguments without a name",
			chunks: []string{
				chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}`),
				finishChunk,
			},
			wantKind: providers.ErrServer,
		},
		{
			name:     "malformed chunk",
			chunks:   []string{chunk(`{"content":"hi"}`), `{not json`},
			wantKind: providers.ErrServer,
		},
		{
			name:     "error object in the stream",
			chunks:   []string{chunk(`{"content":"hi"}`), `{ "error": {"message":"overloaded","type":"rate_limit_error"}}`},
			wantKind: providers.ErrRateLimit,
		},
		{
			name:     "no finish_reason and no [DONE]",
			chunks:   []string{chunk(`{"content":"hi"}`)},
			wantKind: providers.ErrConnection,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, openaitest.Response{RawChunks: tt.chunks, OmitDone: true})
			r := run(t, newProvider(t, srv), userHello)
			if tt.wantKind != 0 {
				var pe *providers.Error
				if !errors.As(r.Err, &pe) || pe.Kind != tt.wantKind {
					t.Fatalf("err = %v, want kind %v", r.Err, tt.wantKind)
				}
				return
			}
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.Text != tt.wantText {
				t.Errorf("text = %q, want %q", r.Text, tt.wantText)
			}
			if len(r.Calls) != len(tt.wantCalls) {
				t.Fatalf("calls = %+v, want %+v", r.Calls, tt.wantCalls)
			}
			for i := range r.Calls {
				if r.Calls[i] != tt.wantCalls[i] {
					t.Errorf("call %d = %+v, want %+v", i, r.Calls[i], tt.wantCalls[i])
				}
			}
			if tt.wantUsage != nil && (r.Usage == nil || *r.Usage != *tt.wantUsage) {
				t.Errorf("usage = %+v, want %+v", r.Usage, tt.wantUsage)
			}
		})
	}
}

func TestRequestMapping(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"done"}})
	p := newProvider(t, srv)
	history := []providers.Message{
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("list files")}},
		{
			Role:      providers.RoleAssistant,
			Content:   []providers.ContentPart{providers.TextPart("Looking.")},
			Reasoning: "The user wants files.",
			ToolCalls: []providers.ToolCall{
				{ID: "functions.Shell:0", Name: "Shell", Arguments: `{"command":"ls"}`},
				{ID: "functions.ReadFile:1", Name: "ReadFile", Arguments: `{"path":"a"}`},
			},
		},
		{Role: providers.RoleTool, ToolCallID: "functions.Shell:0", Content: []providers.ContentPart{providers.TextPart("a\nb\n")}},
		{Role: providers.RoleTool, ToolCallID: "functions.ReadFile:1"},
		{Role: providers.RoleAssistant, Reasoning: "again", ToolCalls: []providers.ToolCall{{ID: "call 2 verbatim", Name: "Now", Arguments: ""}}},
		{Role: providers.RoleTool, ToolCallID: "call 2 verbatim", Content: []providers.ContentPart{providers.TextPart("noon")}},
		{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("see"), {Type: providers.PartImage, ImageURL: "data:image/png;base64,AAAA"}}},
	}
	req := providers.Request{
		System:  "You are kosong.",
		History: history,
		Tools: []providers.ToolDef{
			{Name: "Shell", Description: "Run a command", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
			{Name: "Now", Description: "The time"},
		},
	}
	if r := run(t, p, req); r.Err != nil || r.Text != "done" {
		t.Fatalf("text %q, err %v", r.Text, r.Err)
	}

	got := srv.LastRequest(t)
	if got.Path != "/v1/chat/completions" || got.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("path %q, authorization %q", got.Path, got.Header.Get("Authorization"))
	}
	c := got.Chat
	if c.Model != model || !c.Stream || c.StreamOptions == nil || !c.StreamOptions.IncludeUsage {
		t.Errorf("model %q stream %v stream_options %+v", c.Model, c.Stream, c.StreamOptions)
	}
	msgs := c.Messages
	if len(msgs) != len(history)+1 {
		t.Fatalf("%d messages, want %d", len(msgs), len(history)+1)
	}
	if msgs[0].Role != "system" || msgs[0].Text() != "You are kosong." {
		t.Errorf("first message = %s %q, want the system prompt", msgs[0].Role, msgs[0].Text())
	}
	a := msgs[2]
	if a.Role != "assistant" || a.Text() != "Looking." || a.ReasoningContent == nil || *a.ReasoningContent != "The user wants files." {
		t.Errorf("assistant = %+v", a)
	}
	if len(a.ToolCalls) != 2 || a.ToolCalls[0].ID != "functions.Shell:0" || a.ToolCalls[1].ID != "functions.ReadFile:1" ||
		a.ToolCalls[0].Type != "function" || a.ToolCalls[0].Function.Name != "Shell" || a.ToolCalls[0].Function.Arguments != `{"command":"ls"}` {
		t.Errorf("assistant tool calls = %+v", a.ToolCalls)
	}
	if m := msgs[3]; m.Role != "tool" || m.ToolCallID != "functions.Shell:0" || m.Text() != "a\nb\n" {
		t.Errorf("tool message 1 = %+v", m)
	}
	if m := msgs[4]; m.Role != "tool" || m.ToolCallID != "functions.ReadFile:1" || m.Text() != openaicompat.EmptyToolOutput {
		t.Errorf("tool message 2 = %+v, want the empty-output placeholder", m)
	}
	b := msgs[5]
	if b.Content != nil {
		t.Errorf("assistant with only tool calls has content %s, want the field absent", b.Content)
	}
	if len(b.ToolCalls) != 1 || b.ToolCalls[0].ID != "call 2 verbatim" || b.ToolCalls[0].Function.Arguments != "{}" {
		t.Errorf("second assistant = %+v", b.ToolCalls)
	}
	if b.ReasoningContent == nil || *b.ReasoningContent != "again" {
		t.Errorf("second assistant reasoning_content = %v", b.ReasoningContent)
	}
	var parts []map[string]any
	if err := json.Unmarshal(msgs[7].Content, &parts); err != nil || len(parts) != 2 || parts[1]["type"] != "image_url" {
		t.Errorf("user message with image: content %s", msgs[7].Content)
	}
	if len(c.Tools) != 2 || c.Tools[0].Type != "function" || c.Tools[0].Function.Name != "Shell" ||
		!strings.Contains(string(c.Tools[0].Function.Parameters), `"required":["command"]`) ||
		string(c.Tools[1].Function.Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("tools = %+v", c.Tools)
	}
	// One tool message per call, each answering a call of the assistant
	// message before it.
	for i, m := range msgs {
		if m.Role != "tool" {
			continue
		}
		found := false
		for j := i - 1; j >= 0 && !found; j-- {
			for _, tc := range msgs[j].ToolCalls {
				found = found || tc.ID == m.ToolCallID
			}
		}
		if !found {
			t.Errorf("tool message %d answers unknown id %q", i, m.ToolCallID)
		}
	}
}

func TestMaxTokens(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"a"}}, openaitest.Response{Text: []string{"b"}})
	for _, tc := range []struct{ name, model, field string }{
		{"kimi", "kimi-k2", "max_tokens"},
		{"openai", "gpt-5", "max_completion_tokens"},
	} {
		p, err := openaicompat.New(openaicompat.Config{Name: tc.name, BaseURL: srv.BaseURL(), Model: tc.model, HTTPClient: srv.Client(), MaxTokens: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if r := run(t, p, userHello); r.Err != nil {
			t.Fatalf("%s: %v", tc.name, r.Err)
		}
		body := srv.LastRequest(t).JSON
		if body[tc.field] != float64(1000) || len(body) == 0 {
			t.Errorf("%s: %s = %v in %v", tc.name, tc.field, body[tc.field], body)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name      string
		resp      openaitest.Response
		kind      providers.ErrorKind
		status    int
		retryable bool
		contains  []string
	}{
		{"429", openaitest.Response{Status: 429}, providers.ErrRateLimit, 429, true, []string{"Rate limit"}},
		{"500", openaitest.Response{Status: 500, ErrorMessage: "boom"}, providers.ErrServer, 500, true, []string{"boom"}},
		{"503 plain body", openaitest.Response{Status: 503, ErrorBody: "upstream unavailable"}, providers.ErrServer, 503, true, []string{"upstream unavailable"}},
		{"401", openaitest.Response{Status: 401}, providers.ErrAuth, 401, false, []string{"Invalid Authentication", "KIMI_API_KEY"}},
		{"403", openaitest.Response{Status: 403}, providers.ErrAuth, 403, false, []string{"KIMI_API_KEY"}},
		{"400 with body", openaitest.Response{Status: 400, ErrorMessage: "messages[3]: tool_call_id not found"}, providers.ErrBadRequest, 400, false, []string{"tool_call_id not found"}},
		{"404", openaitest.Response{Status: 404, ErrorBody: "no such model"}, providers.ErrBadRequest, 404, false, []string{"no such model"}},
		{"broken stream", openaitest.Response{Text: []string{"a", "b", "c"}, BreakAfter: 2}, providers.ErrConnection, 0, true, []string{"stream broken"}},
		{"broken stream after tool call", openaitest.Response{ToolCalls: threeCalls(), Quirks: openaitest.Quirks{SplitArguments: 3}, BreakAfter: 6}, providers.ErrConnection, 0, true, nil},
		{"empty response", openaitest.Response{}, providers.ErrEmptyResponse, 0, true, nil},
		{"reasoning only", openaitest.Response{Reasoning: []string{"hmm"}}, providers.ErrEmptyResponse, 0, true, nil},
		{"error event", openaitest.Response{Text: []string{"a"}, StreamError: "internal failure"}, providers.ErrServer, 0, true, []string{"internal failure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, tt.resp)
			r := run(t, newProvider(t, srv), userHello)
			var pe *providers.Error
			if !errors.As(r.Err, &pe) {
				t.Fatalf("err = %v (%T), want *providers.Error", r.Err, r.Err)
			}
			if pe.Kind != tt.kind || pe.StatusCode != tt.status || pe.Retryable() != tt.retryable || pe.Provider != "kimi" {
				t.Errorf("err = %+v (%v), want kind %v status %d retryable %v", pe, pe, tt.kind, tt.status, tt.retryable)
			}
			if tt.kind == providers.ErrAuth && pe.EnvVar != "KIMI_API_KEY" {
				t.Errorf("EnvVar = %q", pe.EnvVar)
			}
			for _, s := range tt.contains {
				if !strings.Contains(pe.Error(), s) {
					t.Errorf("%q does not mention %q", pe.Error(), s)
				}
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := openaitest.NewServer(t)
	p := newProvider(t, srv)
	srv.Close()
	_, err := p.Stream(testCtx(t), userHello)
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.ErrConnection || !pe.Retryable() {
		t.Fatalf("err = %v, want a retryable connection error", err)
	}
}

func TestEmptyQueueIsAServerError(t *testing.T) {
	srv := openaitest.NewServer(t)
	r := run(t, newProvider(t, srv), userHello)
	var pe *providers.Error
	if !errors.As(r.Err, &pe) || pe.Kind != providers.ErrServer || !strings.Contains(pe.Error(), "no scripted response left") {
		t.Fatalf("err = %v", r.Err)
	}
}

func TestCancelMidStream(t *testing.T) {
	resp := openaitest.Response{Text: []string{"a", "b"}}
	release := make(chan struct{})
	defer close(release)
	resp.AfterChunk = func(ctx context.Context, n int, _ string) {
		if n == 1 {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
	}
	srv := openaitest.NewServer(t, resp)
	ctx, cancel := context.WithCancel(testCtx(t))
	s, err := newProvider(t, srv).Stream(ctx, userHello)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Next(); err != nil || ev.Text != "a" {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	cancel()
	_, err = s.Next()
	var pe *providers.Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Fatalf("err = %v, want context.Canceled, not a provider error", err)
	}
}

func TestNewDefaults(t *testing.T) {
	p, err := openaicompat.New(openaicompat.Config{Name: "kimi"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "kimi" || p.Model() != "kimi-k2-turbo-preview" || p.BaseURL() != "https://api.moonshot.ai/v1" || p.APIKeyEnv() != "KIMI_API_KEY" {
		t.Errorf("kimi defaults: %s %s %s %s", p.Name(), p.Model(), p.BaseURL(), p.APIKeyEnv())
	}
	p, err = openaicompat.New(openaicompat.Config{Name: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Model() != "gpt-5" || p.BaseURL() != "https://api.openai.com/v1" || p.APIKeyEnv() != "OPENAI_API_KEY" {
		t.Errorf("openai defaults: %s %s %s", p.Model(), p.BaseURL(), p.APIKeyEnv())
	}
	for _, cfg := range []openaicompat.Config{
		{Name: "local", BaseURL: "http://localhost:1/v1"},
		{Name: "local", Model: "m"},
		{Name: "local", Model: "m", BaseURL: "localhost:8080"},
	} {
		if _, err := openaicompat.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

// A stream that ends with [DONE] is complete even without a finish_reason.
func TestDoneWithoutFinishReason(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{RawChunks: []string{
		chunk(`{"content":"hi"}`),
		chunk(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"X","arguments":"{}"}}]}`),
	}})
	r := run(t, newProvider(t, srv), userHello)
	if r.Err != nil || r.Text != "hi" || len(r.Calls) != 1 || r.Calls[0].ID != "a" {
		t.Fatalf("r = %+v", r)
	}
}

// TestHeaders: configured headers go with every request, through the
// client the caller gives, and the caller's client is left as it was.
func TestHeaders(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"ok"}})
	client := srv.Client()
	transport := client.Transport
	p, err := openaicompat.New(openaicompat.Config{Name: "kimi", BaseURL: srv.BaseURL(), APIKey: "sk-test", Model: model,
		HTTPClient: client, Headers: map[string]string{"X-Team": "blue"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Stream(testCtx(t), providers.Request{History: []providers.Message{{Role: providers.RoleUser, Content: []providers.ContentPart{providers.TextPart("hi")}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := streamtest.Drain(s, nil); r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := srv.LastRequest(t).Header.Get("X-Team"); got != "blue" {
		t.Errorf("X-Team %q, want blue", got)
	}
	if client.Transport != transport {
		t.Error("the caller's client was changed")
	}
}

// Each fragment of a call's arguments is a part of its own, as it arrives:
// the parts are not the whole call sent again at the end.
func TestToolCallPartsFollowFragments(t *testing.T) {
	args := `{"command":"ls -la /tmp"}`
	srv := openaitest.NewServer(t, openaitest.Response{
		ToolCalls: []openaitest.ToolCall{{ID: "call_a", Name: "Shell", Arguments: args}},
		Quirks:    openaitest.Quirks{SplitArguments: 3},
	})
	r := run(t, newProvider(t, srv), userHello)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	streamtest.CheckParts(t, r)
	var fragments []string
	for _, p := range r.Parts {
		if p.Arguments != "" {
			fragments = append(fragments, p.Arguments)
		}
	}
	if want := (len(args) + 2) / 3; len(fragments) != want {
		t.Errorf("%d parts with arguments %q, want %d (one a fragment)", len(fragments), fragments, want)
	}
}
