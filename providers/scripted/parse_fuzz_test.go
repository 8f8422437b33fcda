package scripted

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// FuzzParseScript: parsing a script never panics or hangs; an error is one
// line naming the file; every turn parsed has a non-negative delay and
// usage, and every tool call a name.
func FuzzParseScript(f *testing.F) {
	if data, err := os.ReadFile("../../agents/demo/script.yaml"); err == nil {
		f.Add(string(data))
	}
	for _, s := range []string{
		"turns:\n  - text: hello\n",
		"delay: 5ms\nturns:\n  - reasoning: hmm\n    text: hi there\n    usage: {input_tokens: 3, output_tokens: 2, cache_read_tokens: 1, cache_creation_tokens: 0}\n",
		"turns:\n  - tool_calls:\n      - {id: a, name: Shell, arguments: {command: ls, n: 1, f: 1.5, b: true, z: null, l: [1, x], t: 2024-01-02}}\n      - {name: Glob, arguments: '{\"pattern\": \"*\"}'}\n      - {name: Think}\n",
		"turns:\n  - error: rate_limit\n  - error: nonsense\n",
		"turns:\n  - tool_calls: [{name: X, arguments: &a {k: v}}, {name: Y, arguments: *a}]\n",
		"turns:\n  - tool_calls: [{name: X, arguments: {[1]: v}}]\n",
		"turns:\n  - delay: -1s\n",
		"turns:\n  - usage: {input_tokens: -1}\n",
		"turns: {}\n",
		"other: 1\n",
		"- a\n",
		"",
		"turns:\n  - text: \"a\\nb\"\n    bogus: 1\n",
	} {
		f.Add(s)
	}
	const path = "/scripts/fuzz.yaml"
	f.Fuzz(func(t *testing.T, data string) {
		var turns []Turn
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			turns, err = parse(path, []byte(data))
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer after 5s for %q", data)
		}
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "script "+path+": ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q", msg)
			}
			return
		}
		for i, turn := range turns {
			if turn.Delay < 0 {
				t.Fatalf("turn %d: delay %v", i, turn.Delay)
			}
			if u := turn.Usage; u != nil && (u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheCreationTokens < 0) {
				t.Fatalf("turn %d: usage %+v", i, u)
			}
			for _, c := range turn.ToolCalls {
				if c.Name == "" {
					t.Fatalf("turn %d: tool call without a name: %+v", i, c)
				}
			}
		}
	})
}

// laughs is a script whose arguments are aliases of aliases, levels deep:
// 10^levels values once expanded.
func laughs(levels int) string {
	var b strings.Builder
	b.WriteString("turns:\n  - tool_calls:\n    - name: X\n      arguments:\n        l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "        l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	return b.String()
}

// TestBillionLaughs: arguments that expand to gigabytes are refused, in
// a bounded time, instead of exhausting memory; modest aliasing still works.
func TestBillionLaughs(t *testing.T) {
	turns, err := parse("s.yaml", []byte(laughs(2)))
	if err != nil || strings.Count(turns[0].ToolCalls[0].Arguments, `"x"`) != 10+100 {
		t.Fatalf("modest aliasing: %v", err)
	}
	start := time.Now()
	_, err = parse("s.yaml", []byte(laughs(9)))
	if err == nil || err.Error() != "script s.yaml: line 5: turns[0].tool_calls[0].arguments: document contains excessive aliasing" {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %v", d)
	}
}

// TestDuplicateArgumentKey: a key given twice in a tool call's arguments
// is an error on one line (found by FuzzParseScript).
func TestDuplicateArgumentKey(t *testing.T) {
	_, err := parse("s.yaml", []byte("turns:\n  - tool_calls: [{name: X, arguments: {e: 1, e: 2}}]\n"))
	if err == nil || err.Error() != `script s.yaml: line 2: turns[0].tool_calls[0].arguments: unmarshal errors: line 2: mapping key "e" already defined at line 2` {
		t.Fatalf("err = %v", err)
	}
}
