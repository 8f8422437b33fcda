package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A one-word StrReplaceFile in a 3 MB one-line JSON file, and a WriteFile
// appending to it, through the host and the built-in file plugin: the
// approval carries a bounded diff, not the whole old and new texts (which
// exceed a gRPC message), so the edits go through.
func TestEditThreeMegabyteFile(t *testing.T) {
	work := writeFiles(t, map[string]string{"s.md": "x", "agent.yaml": `version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools:
    - {plugin: file, tools: [StrReplaceFile, WriteFile]}
`})
	var b strings.Builder
	b.WriteString(`{"items": [`)
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, `{"id": %d, "name": "item %d"}, `, i, i)
	}
	b.WriteString(`{"id": -1, "name": "needle"}]}`)
	doc := b.String()
	p := filepath.Join(work, "big.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runHost(t, work, "", "tools", "call", "--yolo", "StrReplaceFile", `{"path": "big.json", "edit": {"old": "needle", "new": "pin"}}`)
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "Applied 1 edit (1 replacement) to `big.json`.") {
		t.Fatalf("StrReplaceFile: exit %d, stdout %.500q, stderr %.500q", r.code, r.stdout, r.stderr)
	}
	r = runHost(t, work, "", "tools", "call", "--yolo", "WriteFile", `{"path": "big.json", "content": "\n", "mode": "append"}`)
	if r.code != 0 {
		t.Fatalf("WriteFile: exit %d, stdout %.500q, stderr %.500q", r.code, r.stdout, r.stderr)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != strings.Replace(doc, "needle", "pin", 1)+"\n" {
		t.Fatalf("big.json is not as expected (%v)", err)
	}
}
