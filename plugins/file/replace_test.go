//go:build unix

package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

func TestStrReplaceFile(t *testing.T) {
	const code = "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name     string
		content  string // of f.txt
		approver plugintest.Approver
		args     string
		kind     pluginsdk.ResultKind
		message  string // substring
		want     string // f.txt afterwards
		asked    bool
	}{
		{"one edit object", code, nil, `{"path": "f.txt", "edit": {"old": "func a()", "new": "func alpha()"}}`,
			pluginsdk.KindOk, "Applied 1 edit (1 replacement) to `f.txt`.", strings.Replace(code, "func a()", "func alpha()", 1), true},
		{"a list of edits, applied in order", code, nil,
			`{"path": "f.txt", "edit": [{"old": "func a()", "new": "func c()"}, {"old": "func c() {\n\treturn 1", "new": "func c() {\n\treturn 3"}]}`,
			pluginsdk.KindOk, "Applied 2 edits (2 replacements)", strings.Replace(code, "func a() {\n\treturn 1", "func c() {\n\treturn 3", 1), true},
		{"replace_all", code, nil, `{"path": "f.txt", "edit": {"old": "return 1", "new": "return 2", "replace_all": true}}`,
			pluginsdk.KindOk, "(2 replacements)", strings.ReplaceAll(code, "return 1", "return 2"), true},
		{"delete with an empty new", "keep drop keep", nil, `{"path": "f.txt", "edit": {"old": " drop", "new": ""}}`,
			pluginsdk.KindOk, "", "keep keep", true},
		{"not found", code, nil, `{"path": "f.txt", "edit": {"old": "func z()", "new": "x"}}`,
			pluginsdk.KindError, "The edit: old was not found in `f.txt`", code, false},
		{"ambiguous without replace_all", code, nil, `{"path": "f.txt", "edit": {"old": "return 1", "new": "return 2"}}`,
			pluginsdk.KindError, "old was found 2 times in `f.txt`", code, false},
		{"nothing written unless every edit applies", code, nil,
			`{"path": "f.txt", "edit": [{"old": "func a()", "new": "func c()"}, {"old": "missing", "new": "x"}]}`,
			pluginsdk.KindError, "Edit 2 of 2: old was not found", code, false},
		{"no change", code, nil, `{"path": "f.txt", "edit": {"old": "func a()", "new": "func a()"}}`,
			pluginsdk.KindError, "unchanged", code, false},
		{"CRLF file edited with LF text keeps CRLF", "one\r\ntwo\r\nthree\r\n", nil,
			`{"path": "f.txt", "edit": {"old": "one\ntwo\n", "new": "1\n2\n"}}`, pluginsdk.KindOk, "", "1\r\n2\r\nthree\r\n", true},
		{"multi-byte text", "héllo 世界\n", nil, `{"path": "f.txt", "edit": {"old": "世界", "new": "🙂"}}`,
			pluginsdk.KindOk, "", "héllo 🙂\n", true},
		{"rejected", code, plugintest.RejectAll("no"), `{"path": "f.txt", "edit": {"old": "func a()", "new": "func b()"}}`,
			pluginsdk.KindRejected, "", code, true},
		{"missing file", "", nil, `{"path": "nope.txt", "edit": {"old": "a", "new": "b"}}`,
			pluginsdk.KindError, "`nope.txt` does not exist. StrReplaceFile only edits existing files; use WriteFile", "", false},
		{"binary file", "a\x00b", nil, `{"path": "f.txt", "edit": {"old": "a", "new": "b"}}`,
			pluginsdk.KindError, "looks like a binary file", "a\x00b", false},
		{"directory", "", nil, `{"path": "sub", "edit": {"old": "a", "new": "b"}}`,
			pluginsdk.KindError, "`sub` is a directory", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work := t.TempDir()
			writeTree(t, work, map[string]string{"sub/": ""})
			if tt.content != "" {
				writeTree(t, work, map[string]string{"f.txt": tt.content})
			}
			h := harness(t, work, tt.approver)
			got := h.MustCall(t, "StrReplaceFile", tt.args)
			if got.Kind != tt.kind || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("got %+v", got)
			}
			if tt.content != "" {
				if content := readFile(t, filepath.Join(work, "f.txt")); content != tt.want {
					t.Fatalf("f.txt = %q, want %q", content, tt.want)
				}
			}
			approvals := h.Approvals()
			if tt.asked != (len(approvals) == 1) || tt.asked && (approvals[0].Action != actionEdit || approvals[0].Description != "Edit file `"+filepath.Join(work, "f.txt")+"`") {
				t.Fatalf("approvals = %+v", approvals)
			}
			if tt.kind == pluginsdk.KindOk && (len(got.Display) != 1 || got.Display[0].Kind != "diff") {
				t.Fatalf("display = %v", got.Display)
			}
		})
	}
}

func TestStrReplaceFileOutside(t *testing.T) {
	work, other := t.TempDir(), t.TempDir()
	writeTree(t, other, map[string]string{"t.txt": "abc"})
	if err := os.Symlink(filepath.Join(other, "t.txt"), filepath.Join(work, "link.txt")); err != nil {
		t.Fatal(err)
	}
	h := harness(t, work, nil)
	got := h.MustCall(t, "StrReplaceFile", `{"path": "link.txt", "edit": {"old": "b", "new": "B"}}`)
	if got.Kind != pluginsdk.KindOk || readFile(t, filepath.Join(other, "t.txt")) != "aBc" {
		t.Fatalf("got %+v", got)
	}
	if fi, err := os.Lstat(filepath.Join(work, "link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if a := h.Approvals(); len(a) != 1 || a[0].Action != actionEditOutside {
		t.Fatalf("approvals = %+v", a)
	}
}

// TestStrReplaceFileSchema checks that the schema the host validates
// arguments against accepts both forms of edit and refuses malformed ones.
func TestStrReplaceFileSchema(t *testing.T) {
	s := compileSchema(t, harness(t, t.TempDir(), nil), "StrReplaceFile")
	for args, want := range map[string]bool{
		`{"path": "f", "edit": {"old": "a", "new": "b"}}`:                                     true,
		`{"path": "f", "edit": {"old": "a", "new": "b", "replace_all": true}}`:                true,
		`{"path": "f", "edit": [{"old": "a", "new": "b"}, {"old": "c", "new": ""}]}`:          true,
		`{"path": "f", "edit": []}`:                                                           false,
		`{"path": "f", "edit": "a"}`:                                                          false,
		`{"path": "f", "edit": {"old": "a"}}`:                                                 false,
		`{"path": "f", "edit": {"old": "", "new": "b"}}`:                                      false,
		`{"path": "f", "edit": {"old": "a", "new": "b", "extra": 1}}`:                         false,
		`{"edit": {"old": "a", "new": "b"}}`:                                                  false,
		`{"path": "f", "edit": [{"old": "a", "new": "b"}, {"old": "c", "new": "d", "x": 1}]}`: false,
	} {
		if got := validates(t, s, args); got != want {
			t.Errorf("validate %s = %v, want %v", args, got, want)
		}
	}
}
