package scripted_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/internal/streamtest"
	"github.com/kosong-host/kosong-host/providers/scripted"
)

func play(t *testing.T, p providers.ChatProvider) streamtest.Result {
	t.Helper()
	s, err := p.Stream(context.Background(), providers.Request{})
	if err != nil {
		return streamtest.Result{Err: err}
	}
	return streamtest.Drain(s, nil)
}

func writeScript(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const script = `# a demo
turns:
  - reasoning: "The user wants files."
    text: "Let me   look around."
    tool_calls:
      - {id: call_1, name: Shell, arguments: {command: "ls -la", timeout: 5, flags: [a, b], deep: {x: null, y: true}}}
      - name: ReadFile
        arguments: '{"path": "README.md"}'
    usage: {input_tokens: 10, output_tokens: 5}
  - error: rate_limit
  - text: "Done."
    tool_calls:
      - name: Now
`

func TestReplay(t *testing.T) {
	p, err := scripted.Load(writeScript(t, script))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "scripted" || p.Model() != "script:demo.yaml" {
		t.Errorf("Name %q Model %q", p.Name(), p.Model())
	}

	r := play(t, p)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if r.Text != "Let me   look around." || r.TextChunks != 4 || r.Reasoning != "The user wants files." {
		t.Errorf("text %q in %d chunks, reasoning %q", r.Text, r.TextChunks, r.Reasoning)
	}
	want := []providers.ToolCall{
		{ID: "call_1", Name: "Shell", Arguments: `{"command":"ls -la","timeout":5,"flags":["a","b"],"deep":{"x":null,"y":true}}`},
		{ID: "call_1_2", Name: "ReadFile", Arguments: `{"path": "README.md"}`},
	}
	if len(r.Calls) != 2 || r.Calls[0] != want[0] || r.Calls[1] != want[1] {
		t.Errorf("calls = %+v\nwant    %+v", r.Calls, want)
	}
	if r.Usage == nil || *r.Usage != (providers.Usage{InputTokens: 10, OutputTokens: 5}) {
		t.Errorf("usage = %+v", r.Usage)
	}

	r = play(t, p)
	var pe *providers.Error
	if !errors.As(r.Err, &pe) || pe.Kind != providers.ErrRateLimit || !pe.Retryable() {
		t.Errorf("turn 2: err = %v, want a scripted rate limit", r.Err)
	}

	r = play(t, p)
	if r.Err != nil || r.Text != "Done." || len(r.Calls) != 1 || r.Calls[0] != (providers.ToolCall{ID: "call_3_1", Name: "Now", Arguments: "{}"}) {
		t.Errorf("turn 3 = %+v", r)
	}

	if p.Played() != 3 || p.Remaining() != 0 {
		t.Errorf("played %d remaining %d", p.Played(), p.Remaining())
	}
	r = play(t, p)
	if !errors.As(r.Err, &pe) || pe.Kind != providers.ErrScriptExhausted || pe.Retryable() {
		t.Fatalf("exhausted: err = %v", r.Err)
	}
	if !strings.Contains(r.Err.Error(), "scripted provider: the script "+p.Source()+" has no more turns (3 played)") {
		t.Errorf("exhausted message = %q", r.Err)
	}
}

func TestNewFromGo(t *testing.T) {
	p := scripted.New([]scripted.Turn{
		{Text: "one two", ToolCalls: []providers.ToolCall{{Name: "A", Arguments: "{}"}, {ID: "keep", Name: "B", Arguments: `{"x":1}`}}},
		{}, // empty: an empty response, as a real model's would be
	})
	if p.Model() != "script:inline" {
		t.Errorf("Model = %q", p.Model())
	}
	r := play(t, p)
	if r.Err != nil || r.Text != "one two" || r.TextChunks != 2 || r.Calls[0].ID != "call_1_1" || r.Calls[1].ID != "keep" {
		t.Errorf("turn 1 = %+v", r)
	}
	r = play(t, p)
	var pe *providers.Error
	if !errors.As(r.Err, &pe) || pe.Kind != providers.ErrEmptyResponse {
		t.Errorf("turn 2 err = %v, want empty response", r.Err)
	}
	r = play(t, p)
	if !errors.As(r.Err, &pe) || pe.Kind != providers.ErrScriptExhausted || !strings.Contains(pe.Error(), "(2 played)") {
		t.Errorf("turn 3 err = %v", r.Err)
	}
}

func TestDelay(t *testing.T) {
	// Configured delays are parsed...
	p, err := scripted.Parse("d.yaml", []byte("delay: 40ms\nturns:\n  - text: a b\n  - text: c d\n    delay: 1h\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := play(t, p); r.Err != nil || r.Text != "a b" {
		t.Fatalf("turn 1 = %+v", r)
	}
	// ...and a long one is cut short by the context.
	ctx, cancel := context.WithCancel(context.Background())
	s, err := p.Stream(ctx, providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Next(); err != nil || ev.Text != "c " {
		t.Fatalf("first chunk %+v %v", ev, err)
	}
	cancel()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestDelayBetweenChunksOnly(t *testing.T) {
	p := scripted.New([]scripted.Turn{{Text: "only", Delay: time.Hour}})
	done := make(chan streamtest.Result, 1)
	go func() { done <- play(t, p) }()
	// A single chunk has nothing to wait for; a bug here hangs the test.
	if r := <-done; r.Err != nil || r.Text != "only" {
		t.Fatalf("r = %+v", r)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{"bad YAML", "turns: [\n  - text: a\n", []string{"demo.yaml", "invalid YAML"}},
		{"empty", "", []string{"demo.yaml", "empty"}},
		{"not a mapping", "- text: a\n", []string{"line 1", "top level", "mapping"}},
		{"no turns", "delay: 1s\n", []string{"turns: missing"}},
		{"unknown top-level field", "turns: []\nmodel: x\n", []string{"line 2", `unknown field "model"`, "known: delay, turns"}},
		{"unknown turn field", "turns:\n  - text: a\n    txet: b\n", []string{"line 3", "turns[0]", `unknown field "txet"`}},
		{"unknown tool call field", "turns:\n  - tool_calls:\n      - {name: A, args: {}}\n", []string{"line 3", "turns[0].tool_calls[0]", `unknown field "args"`}},
		{"tool call without name", "turns:\n  - tool_calls:\n      - {arguments: {}}\n", []string{"turns[0].tool_calls[0].name: missing"}},
		{"arguments list", "turns:\n  - tool_calls:\n      - {name: A, arguments: [1]}\n", []string{"turns[0].tool_calls[0].arguments", "mapping or a JSON string"}},
		{"bad delay", "turns:\n  - text: a\n    delay: soon\n", []string{"line 3", "turns[0].delay", "duration"}},
		{"bad usage", "turns:\n  - text: a\n    usage: {input_tokens: many}\n", []string{"turns[0].usage.input_tokens", "integer"}},
		{"bad error kind", "turns:\n  - error: flaky\n", []string{"turns[0].error", `unknown error "flaky"`}},
		{"text not a string", "turns:\n  - text: [a]\n", []string{"turns[0].text", "want a string"}},
		{"bad stop", "turns:\n  - text: a\n    stop: length\n", []string{"line 3", "turns[0].stop", `unknown stop reason "length"`, "max_tokens"}},
		{"bad truncated", "turns:\n  - tool_calls:\n      - {name: A, truncated: maybe}\n", []string{"turns[0].tool_calls[0].truncated", "true or false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scripted.Load(writeScript(t, tt.content))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			for _, w := range append(tt.want, "demo.yaml") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
	if _, err := scripted.Load(filepath.Join(t.TempDir(), "nope.yaml")); err == nil || !strings.Contains(err.Error(), "nope.yaml: file not found") {
		t.Errorf("missing file: %v", err)
	}
}

func TestStopAndTruncated(t *testing.T) {
	p, err := scripted.Load(writeScript(t, `
turns:
  - text: "Hi."
  - tool_calls: [{name: Shell, arguments: {command: ls}}]
  - text: "I will write it."
    tool_calls:
      - name: WriteFile
        arguments: '{"path": "a.txt", "cont'
        truncated: true
  - text: "A long answer that"
    stop: max_tokens
    usage: {input_tokens: 1, output_tokens: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []providers.StopReason{providers.StopEnd, providers.StopToolUse, providers.StopMaxTokens, providers.StopMaxTokens}
	for i, stop := range want {
		r := play(t, p)
		if r.Err != nil {
			t.Fatalf("turn %d: %v", i+1, r.Err)
		}
		if r.Stop != stop || r.Stops != 1 || !r.StopLast {
			t.Errorf("turn %d: stop %q (%d, last %v), want one %q, last", i+1, r.Stop, r.Stops, r.StopLast, stop)
		}
		if i == 2 {
			if len(r.Calls) != 1 || !r.Calls[0].Truncated || r.Calls[0].Arguments != `{"path": "a.txt", "cont` {
				t.Errorf("truncated turn: calls %+v", r.Calls)
			}
		}
	}
}
