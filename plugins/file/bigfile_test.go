//go:build unix

package file

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

// bigJSON is a 3 MB one-line JSON document with one "needle".
func bigJSON() string {
	var b strings.Builder
	b.WriteString(`{"items": [`)
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, `{"id": %d, "name": "item %d", "tags": ["a", "b"]}, `, i, i)
	}
	b.WriteString(`{"id": -1, "name": "needle"}]}` + "\n")
	return b.String()
}

// diffBlocks decodes display blocks of kind diff, failing on other kinds.
func diffBlocks(t *testing.T, blocks []pluginsdk.DisplayBlock) ([]pluginsdk.DiffBlock, int) {
	t.Helper()
	var out []pluginsdk.DiffBlock
	size := 0
	for _, b := range blocks {
		raw, err := json.Marshal(b.Data)
		if err != nil {
			t.Fatal(err)
		}
		size += len(raw)
		var d pluginsdk.DiffBlock
		if b.Kind != "diff" || json.Unmarshal(raw, &d) != nil {
			t.Fatalf("block %s %s", b.Kind, raw)
		}
		out = append(out, d)
	}
	return out, size
}

// TestBigFileEdits edits a 3 MB one-line JSON file through the plugin's
// gRPC glue: the approval and the result carry a diff of a few KB, not the
// 3 MB texts (which exceed a gRPC message), and the file keeps its mode.
func TestBigFileEdits(t *testing.T) {
	doc := bigJSON()
	tests := []struct {
		name, tool, args string
		want             func(string) string
		message, desc    string
		oldPart, newPart string // in the one hunk
	}{
		{"StrReplaceFile one word", "StrReplaceFile", `{"path": "big.json", "edit": {"old": "\"needle\"", "new": "\"pin\""}}`,
			func(s string) string { return strings.Replace(s, `"needle"`, `"pin"`, 1) },
			"Applied 1 edit (1 replacement) to `big.json`.", "Edit file `%s`", `"needle"`, `"pin"`},
		{"StrReplaceFile replace_all", "StrReplaceFile", `{"path": "big.json", "edit": {"old": "\"tags\"", "new": "\"labels\"", "replace_all": true}}`,
			func(s string) string { return strings.ReplaceAll(s, `"tags"`, `"labels"`) },
			"replacements) to `big.json`.", "Edit file `%s` (the diff shows only part of this edit)", `"tags"`, `"labels"`},
		{"WriteFile overwrite with one word changed", "WriteFile", "", // args built below
			func(s string) string { return strings.Replace(s, `"item 1000"`, `"item one thousand"`, 1) },
			"Wrote ", "Write file `%s`", `"item 1000"`, `"item one thousand"`},
		{"WriteFile append", "WriteFile", `{"path": "big.json", "content": "{\"more\": 1}\n", "mode": "append"}`,
			func(s string) string { return s + "{\"more\": 1}\n" },
			"Appended 12 bytes to `big.json`", "Append to file `%s`", "", `{"more": 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			p := filepath.Join(work, "big.json")
			if err := os.WriteFile(p, []byte(doc), 0o640); err != nil {
				t.Fatal(err)
			}
			args := tt.args
			if args == "" {
				b, _ := json.Marshal(map[string]string{"path": "big.json", "content": tt.want(doc)})
				args = string(b)
			}
			h := harness(t, work, nil)
			got := h.MustCall(t, tt.tool, args)
			if got.Kind != pluginsdk.KindOk || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("got %v: %.300s", got.Kind, got.Message)
			}
			if readFile(t, p) != tt.want(doc) {
				t.Fatal("the file is not as expected")
			}
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o640 {
				t.Fatalf("mode %v %v", fi.Mode(), err)
			}
			if entries, _ := os.ReadDir(work); len(entries) != 1 {
				t.Fatalf("temporary files left: %v", entries)
			}
			a := h.Approvals()
			if len(a) != 1 || a[0].Description != fmt.Sprintf(tt.desc, p) {
				t.Fatalf("approvals %+v", a)
			}
			for _, blocks := range [][]pluginsdk.DisplayBlock{a[0].Display, got.Display} {
				diffs, size := diffBlocks(t, blocks)
				if size > 2*pluginsdk.MaxDiffBytes || len(diffs) == 0 {
					t.Fatalf("%d blocks, %d bytes of JSON", len(diffs), size)
				}
				first := diffs[0]
				if first.Path != p || first.OldStart != 1 || first.NewStart != 1 ||
					!strings.Contains(first.OldText, tt.oldPart) || !strings.Contains(first.NewText, tt.newPart) {
					t.Fatalf("first hunk %.500v", first)
				}
			}
		})
	}
}

// TestBigFileEditNotDone: a rejected or failing edit of a large file leaves
// it as it was, with no temporary file beside it.
func TestBigFileEditNotDone(t *testing.T) {
	doc := bigJSON()
	tests := []struct {
		name     string
		approver func(work string) plugintest.Approver
		args     string
		kind     pluginsdk.ResultKind
		message  string
	}{
		{"rejected", func(string) plugintest.Approver { return plugintest.RejectAll("no") },
			`{"path": "big.json", "edit": {"old": "needle", "new": "pin"}}`, pluginsdk.KindRejected, ""},
		{"not found", nil, `{"path": "big.json", "edit": {"old": "haystack", "new": "pin"}}`,
			pluginsdk.KindError, "The edit: old was not found in `big.json`"},
		{"ambiguous", nil, `{"path": "big.json", "edit": {"old": "\"tags\"", "new": "x"}}`,
			pluginsdk.KindError, fmt.Sprintf("The edit: old was found %d times in `big.json`", strings.Count(doc, `"tags"`))},
		{"a later edit fails", nil, `{"path": "big.json", "edit": [{"old": "needle", "new": "pin"}, {"old": "needle", "new": "x"}]}`,
			pluginsdk.KindError, "Edit 2 of 2: old was not found"},
		{"edits that cancel out", nil, `{"path": "big.json", "edit": [{"old": "needle", "new": "pin"}, {"old": "pin", "new": "needle"}]}`,
			pluginsdk.KindError, "The edits leave the file unchanged"},
		{"the file becomes a directory before the rename", func(work string) plugintest.Approver {
			return func(plugintest.ApprovalRequest) pluginsdk.Decision {
				p := filepath.Join(work, "big.json")
				if err := os.Rename(p, p+".kept"); err != nil {
					t.Error(err)
				}
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Error(err)
				}
				return pluginsdk.Decision{Approved: true}
			}
		}, `{"path": "big.json", "edit": {"old": "needle", "new": "pin"}}`, pluginsdk.KindError, "Cannot write `big.json`: rename "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			if err := os.Mkdir(work, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(work, "big.json"), []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			var approver plugintest.Approver
			if tt.approver != nil {
				approver = tt.approver(work)
			}
			got := harness(t, work, approver).MustCall(t, "StrReplaceFile", tt.args)
			if got.Kind != tt.kind || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("got %+v", got)
			}
			want, p := 1, filepath.Join(work, "big.json")
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				want, p = 2, p+".kept"
			}
			if readFile(t, p) != doc {
				t.Fatal("the file changed")
			}
			if entries, _ := os.ReadDir(work); len(entries) != want {
				t.Fatalf("temporary files left: %v", entries)
			}
		})
	}
}
