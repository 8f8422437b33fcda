package streamjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk/limits"
)

// TestLineIsBounded: every line the Writer writes is within
// limits.StreamJSONLineBytes and valid JSON: the longest strings of an event
// over it are cut, marked; an event whose bulk is not in its strings is
// replaced by an error event saying so.
func TestLineIsBounded(t *testing.T) {
	many := make([]CallRef, 60_000)
	for i := range many {
		many[i] = CallRef{ID: "call_0123456789", Name: "Shell"}
	}
	tests := []struct {
		name  string
		event any
		check func(t *testing.T, line map[string]any)
	}{
		{"small events are untouched", ToolProgressEvent{Type: "tool_progress", ID: "c1", Name: "Index", Progress: 1, Message: "files"},
			func(t *testing.T, line map[string]any) {
				if line["message"] != "files" {
					t.Fatalf("line %v", line)
				}
			}},
		{"a result's longest strings are cut", ToolResultEvent{Type: "tool_result", ID: "c1", Name: "Flood", Brief: "brief",
			Message: strings.Repeat("m", 3<<20), Output: strings.Repeat("o", 2<<20)},
			func(t *testing.T, line map[string]any) {
				msg, out := line["message"].(string), line["output"].(string)
				if !strings.HasSuffix(msg, limits.TruncatedMarker) || line["brief"] != "brief" || line["id"] != "c1" {
					t.Fatalf("message %d bytes, output %d bytes, brief %v", len(msg), len(out), line["brief"])
				}
			}},
		{"escaped characters count as written", ToolCallEvent{Type: "tool_call", ID: "c1", Name: "WriteFile",
			Arguments: strings.Repeat("\"\x01", 1<<20)},
			func(t *testing.T, line map[string]any) {
				if args := line["arguments"].(string); !strings.HasSuffix(args, limits.TruncatedMarker) {
					t.Fatalf("arguments of %d bytes", len(args))
				}
			}},
		{"multi-byte characters are not split", TextEvent{Type: "text", Text: strings.Repeat("世", 1<<20)},
			func(t *testing.T, line map[string]any) {
				if text := line["text"].(string); !strings.HasSuffix(text, limits.TruncatedMarker) || strings.ContainsRune(text, '\uFFFD') {
					t.Fatalf("text of %d bytes", len(text))
				}
			}},
		{"an event whose bulk is not its strings is left out", RetryEvent{Type: "retry", Error: "overloaded", KeptCalls: many},
			func(t *testing.T, line map[string]any) {
				want := "a retry event of 2.3 MiB was left out: it is over the stream-json line limit of 1 MiB"
				if line["type"] != "error" || line["error"] != want {
					t.Fatalf("line %v, want the error %q", line, want)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := NewWriter(&out).Write(tt.event); err != nil {
				t.Fatal(err)
			}
			if out.Len() > limits.StreamJSONLineBytes || bytes.Count(out.Bytes(), []byte("\n")) != 1 {
				t.Fatalf("a line of %d bytes", out.Len())
			}
			var line map[string]any
			if err := json.Unmarshal(out.Bytes(), &line); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			tt.check(t, line)
		})
	}
}
