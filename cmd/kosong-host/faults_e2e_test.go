package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

const shellAgent = "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [\"shell:Shell\"]\n"

// streamEvents parses stream-json output.
func streamEvents(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func eventsOfType(evs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

// chunkWith is the number of the first data chunk of resp containing s.
func chunkWith(t *testing.T, resp openaitest.Response, s string) int {
	t.Helper()
	for i, c := range openaitest.Chunks("", resp) {
		if strings.Contains(c, s) {
			return i
		}
	}
	t.Fatalf("no chunk contains %q", s)
	return 0
}

// TestRunBrokenStreamKeepsTheCallThatRan: the stream breaks after a
// complete Shell call and before the next is complete. The command runs
// once, and the retried request shows its result.
func TestRunBrokenStreamKeepsTheCallThatRan(t *testing.T) {
	work := writeFiles(t, map[string]string{"agent.yaml": shellAgent, "s.md": "You run commands."})
	first := openaitest.Response{
		Text: []string{"Appending."},
		ToolCalls: []openaitest.ToolCall{
			{Name: "Shell", Arguments: `{"command":"echo ran >> count.txt && echo appended"}`},
			{Name: "Shell", Arguments: `{"command":"echo never >> count.txt"}`},
		},
		Quirks: openaitest.Quirks{SplitArguments: 8},
	}
	// The server dies right after the first fragment of the second call:
	// the first call is complete (and dispatched), the second is not.
	first.BreakAfter = chunkWith(t, first, `"id":"call_1"`) + 1
	srv := openaitest.NewValidatingServer(t, first, openaitest.Response{Text: []string{"Appended once."}})
	env := []string{"OPENAI_API_KEY=x", "OPENAI_BASE_URL=" + srv.BaseURL()}
	r := runHostEnv(t, work, env, "", "run", "--yolo", "--output-format", "stream-json", "-p", "Append a line.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(filepath.Join(work, "count.txt"))
	if err != nil || string(data) != "ran\n" {
		t.Fatalf("count.txt %q (%v): the command must run exactly once", data, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var calls, results []string
	for _, m := range reqs[1].Chat.Messages {
		for _, tc := range m.ToolCalls {
			calls = append(calls, tc.ID+" "+tc.Function.Arguments)
		}
		if m.Role == "tool" {
			results = append(results, m.ToolCallID+"="+strings.TrimSpace(m.Text()))
		}
		if m.Role == "assistant" && m.Text() != "Appending." {
			t.Errorf("assistant message %q, want the text streamed before the break", m.Text())
		}
	}
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "call_0 ") || strings.Join(results, "|") != "call_0=appended" {
		t.Fatalf("retried request: calls %q results %q", calls, results)
	}
	evs := streamEvents(t, r.stdout)
	retries := eventsOfType(evs, "retry")
	if len(retries) != 1 {
		t.Fatalf("retry events %v\n%s", retries, r.stdout)
	}
	kept, _ := retries[0]["kept_calls"].([]any)
	if len(kept) != 1 || kept[0].(map[string]any)["id"] != "call_0" || kept[0].(map[string]any)["name"] != "Shell" {
		t.Fatalf("retry event %v", retries[0])
	}
}

// TestRunRepeatGuard: a model that makes the same Echo call in every step
// gets the escalating reminders, shown in stream-json, and the turn stops
// at the 12th with reason tool_call_repeat, not as an error.
func TestRunRepeatGuard(t *testing.T) {
	var script strings.Builder
	script.WriteString("turns:\n")
	for i := 1; i <= 13; i++ {
		fmt.Fprintf(&script, "  - tool_calls: [{id: c%d, name: Echo, arguments: {text: again}}]\n", i)
	}
	work := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi", "script.yaml": script.String()})
	r := runHost(t, work, "", "run", "--provider", "scripted", "--script", "script.yaml", "--output-format", "stream-json", "-p", "Echo.")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	evs := streamEvents(t, r.stdout)
	reminders := map[string]string{}
	for _, ev := range eventsOfType(evs, "tool_result") {
		if s, _ := ev["reminder"].(string); s != "" {
			reminders[ev["id"].(string)] = s
		}
	}
	if len(reminders) != 3 || !strings.Contains(reminders["c5"], "`Echo` 5 times in a row") || !strings.Contains(reminders["c8"], "dead end") {
		t.Fatalf("reminders %q", reminders)
	}
	ends := eventsOfType(evs, "turn_end")
	if len(ends) != 1 || ends[0]["reason"] != "tool_call_repeat" || ends[0]["error"] != nil || len(eventsOfType(evs, "error")) != 0 {
		t.Fatalf("turn_end %v", ends)
	}
	if n := len(eventsOfType(evs, "tool_call")); n != 12 {
		t.Fatalf("%d tool calls, want 12", n)
	}
}
