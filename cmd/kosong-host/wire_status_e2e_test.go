package main_test

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestWireStatusAndCompaction: StatusUpdate carries the context's size and
// the window's; a context past the threshold compacts before the next
// turn's step, between CompactionBegin and CompactionEnd.
func TestWireStatusAndCompaction(t *testing.T) {
	dir, env := t.TempDir(), emptyEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - {text: "r1", usage: {input_tokens: 100, output_tokens: 10}}
  - {text: "r2", usage: {input_tokens: 6600, output_tokens: 100}}
  - text: "SUMMARY: two questions answered."
  - {text: "r3", usage: {input_tokens: 700, output_tokens: 100}}
`)
	c := startWire(t, dir, env, "--provider", "scripted", "--script", script, "--max-context-size", "8192")
	initWire(c)
	c.request("p1", "prompt", map[string]any{"user_input": "one"})
	st := c.event("StatusUpdate", nil)
	if st["context_tokens"] != float64(110) || st["max_context_tokens"] != float64(8192) ||
		fmt.Sprintf("%.4f", st["context_usage"]) != fmt.Sprintf("%.4f", 110.0/8192) {
		t.Errorf("StatusUpdate %v", st)
	}
	c.response("p1")
	c.request("p2", "prompt", map[string]any{"user_input": "two"})
	if st := c.event("StatusUpdate", nil); st["context_tokens"] != float64(6700) {
		t.Errorf("StatusUpdate %v", st)
	}
	c.response("p2")
	c.request("p3", "prompt", map[string]any{"user_input": "three"})
	if b := c.event("CompactionBegin", nil); b["tokens"] != float64(6700) {
		t.Errorf("CompactionBegin %v", b)
	}
	if e := c.event("CompactionEnd", nil); e["tokens"] != float64(6700) || e["error"] != "" || e["summarised"] == float64(0) {
		t.Errorf("CompactionEnd %v", e)
	}
	c.event("ContentPart", func(p map[string]any) bool { return p["text"] == "r3" })
	if r := c.response("p3"); fmt.Sprint(r["result"]) != "map[status:finished steps:1]" {
		t.Fatalf("prompt: %v", r)
	}
}
