package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestSmallWindowCompactsWhenNearlyFull: an interactive session on an 8k
// window whose context grows over five turns to 73 % and then 82 % of the
// window compacts once, before the sixth turn, and not before.
func TestSmallWindowCompactsWhenNearlyFull(t *testing.T) {
	work := writeFiles(t, map[string]string{"script.yaml": `
turns:
  - {text: "reply one", usage: {input_tokens: 1400, output_tokens: 100}}
  - {text: "reply two", usage: {input_tokens: 2900, output_tokens: 100}}
  - {text: "reply three", usage: {input_tokens: 4400, output_tokens: 100}}
  - {text: "reply four", usage: {input_tokens: 5900, output_tokens: 100}}
  - {text: "reply five", usage: {input_tokens: 6600, output_tokens: 100}}
  - text: "SUMMARY: five questions answered."
  - {text: "reply six", usage: {input_tokens: 700, output_tokens: 100}}
`})
	input := strings.Join([]string{"one", "two", "three", "four", "five", "six", "exit"}, "\n") + "\n"
	r := runHostEnv(t, work, nil, input, "--agent", filepath.Join(testbin.Root(), "agent.yaml"),
		"run", "-i", "--provider", "scripted", "--script", "script.yaml", "--max-context-size", "8192")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	out := r.stdout
	if n := strings.Count(out, "context compacted"); n != 1 {
		t.Fatalf("compacted %d times, want once (after the context reached 6,700 of 8,192 tokens):\n%s", n, out)
	}
	compacted := strings.Index(out, "context compacted: ")
	if five, six := strings.Index(out, "reply five"), strings.Index(out, "reply six"); five < 0 || six < 0 || !(five < compacted && compacted < six) {
		t.Errorf("want the compaction between the fifth and sixth replies (at %d, %d, %d):\n%s", five, compacted, six, out)
	}
	if !strings.Contains(out, "(6700 tokens)") {
		t.Errorf("the compaction does not name the 6,700 tokens that triggered it:\n%s", out)
	}
}
