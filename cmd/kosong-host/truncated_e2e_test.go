package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestRunTruncatedToolCall: an OpenAI-compatible response cut off by the
// output limit (finish_reason length) in the middle of a Shell call's
// arguments. The complete call before it runs; the cut one does not, its
// result tells the model why, the user is warned, and the next request's
// history is one every provider accepts (each call has one result).
func TestRunTruncatedToolCall(t *testing.T) {
	work := writeFiles(t, map[string]string{"agent.yaml": shellAgent, "s.md": "You run commands."})
	first := openaitest.Response{
		ToolCalls: []openaitest.ToolCall{
			{Name: "Shell", Arguments: `{"command":"echo ran >> count.txt"}`},
			{Name: "Shell", Arguments: `{"command":"echo cut >> count.txt && echo more`},
		},
		FinishReason: "length",
		Quirks:       openaitest.Quirks{SplitArguments: 6},
	}
	srv := openaitest.NewValidatingServer(t, first, openaitest.Response{Text: []string{"Done in parts."}})
	env := []string{"OPENAI_API_KEY=x", "OPENAI_BASE_URL=" + srv.BaseURL()}
	r := runHostEnv(t, work, env, "", "run", "--yolo", "--output-format", "stream-json", "-p", "Append.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if data, err := os.ReadFile(filepath.Join(work, "count.txt")); err != nil || string(data) != "ran\n" {
		t.Fatalf("count.txt %q (%v): the complete call runs, the cut one never", data, err)
	}
	evs := streamEvents(t, r.stdout)
	stops := eventsOfType(evs, "stop")
	if len(stops) == 0 || stops[0]["stop_reason"] != "max_tokens" || stops[0]["truncated_calls"] == nil {
		t.Fatalf("stop events %v, want max_tokens naming the cut call", stops)
	}
	var cut map[string]any
	for _, ev := range eventsOfType(evs, "tool_result") {
		if ev["id"] == "call_1" {
			cut = ev
		}
	}
	if cut == nil || cut["is_error"] != true || !strings.Contains(cut["message"].(string)+cut["output"].(string), "output") {
		t.Fatalf("result of the cut call %v, want an error about the output limit", cut)
	}
	// The validating server accepted the second request: every call of the
	// history has exactly one result.
	if got := len(srv.Requests()); got != 2 {
		t.Fatalf("%d requests, want 2", got)
	}
}
