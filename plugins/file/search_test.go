//go:build unix

package file

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

var tree = map[string]string{
	"main.go":                   "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
	"README.md":                 "# hello\nSay hello.\n",
	"sub/util.go":               "package sub\n\n// Hello says hello.\nfunc Hello() {}\n",
	"sub/deep/x.txt":            "nothing here\n",
	"sub/deep/y.go":             "package deep\n",
	".hidden.txt":               "hello from a dotfile\n",
	".git/config":               "hello from git\n",
	"node_modules/pkg/index.js": "hello from a dependency\n",
	"image.bin":                 "hello\x00binary",
	"empty/":                    "",
}

func TestGlob(t *testing.T) {
	work := t.TempDir()
	writeTree(t, work, tree)
	if err := os.Symlink(filepath.Join(work, "sub"), filepath.Join(work, "linked")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		kind       pluginsdk.ResultKind
		output     string
		message    string
	}{
		{"top level", `{"pattern": "*.go"}`, pluginsdk.KindOk, "main.go\n", "Found 1 match for `*.go` in the working directory."},
		{"recursive, leading ** allowed", `{"pattern": "**/*.go"}`, pluginsdk.KindOk, "main.go\nsub/deep/y.go\nsub/util.go\n", "Found 3 matches"},
		{"anchored recursive", `{"pattern": "sub/**/*.go"}`, pluginsdk.KindOk, "sub/deep/y.go\nsub/util.go\n", ""},
		{"alternatives", `{"pattern": "*.{md,txt}"}`, pluginsdk.KindOk, ".hidden.txt\nREADME.md\n", ""},
		{"directories too by default", `{"pattern": "*"}`, pluginsdk.KindOk,
			".git/\n.hidden.txt\nREADME.md\nempty/\nimage.bin\nlinked\nmain.go\nnode_modules/\nsub/\n", ""},
		{"files only", `{"pattern": "*", "include_dirs": false}`, pluginsdk.KindOk, ".hidden.txt\nREADME.md\nimage.bin\nlinked\nmain.go\n", ""},
		{"recursive with directories", `{"pattern": "sub/**"}`, pluginsdk.KindOk, "sub/\nsub/deep/\nsub/deep/x.txt\nsub/deep/y.go\nsub/util.go\n", ""},
		{"relative directory", `{"pattern": "*.go", "directory": "sub"}`, pluginsdk.KindOk, "sub/util.go\n", "in sub."},
		{"absolute directory", fmt.Sprintf(`{"pattern": "*.go", "directory": %q}`, filepath.Join(work, "sub")), pluginsdk.KindOk,
			filepath.Join(work, "sub", "util.go") + "\n", ""},
		{"no match", `{"pattern": "*.rs"}`, pluginsdk.KindOk, "", "No matches for `*.rs` in the working directory."},
		{"absolute pattern refused", `{"pattern": "/etc/*"}`, pluginsdk.KindError, "", "is absolute"},
		{"no going up", `{"pattern": "../*.go"}`, pluginsdk.KindError, "", "goes up with `..`"},
		{"invalid pattern", `{"pattern": "[a-"}`, pluginsdk.KindError, "", "Invalid glob pattern"},
		{"missing directory", `{"pattern": "*", "directory": "nope"}`, pluginsdk.KindError, "", "`nope` does not exist."},
		{"directory is a file", `{"pattern": "*", "directory": "main.go"}`, pluginsdk.KindError, "", "is not a directory"},
	}
	h := harness(t, work, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.MustCall(t, "Glob", tt.args)
			if got.Kind != tt.kind || got.Text() != tt.output || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestGlobCap(t *testing.T) {
	work := t.TempDir()
	files := map[string]string{}
	for i := range maxGlobResults + 5 {
		files[fmt.Sprintf("f%04d.txt", i)] = ""
	}
	writeTree(t, work, files)
	got := harness(t, work, nil).MustCall(t, "Glob", `{"pattern": "*.txt"}`)
	lines := strings.Split(strings.TrimSuffix(got.Text(), "\n"), "\n")
	if got.Kind != pluginsdk.KindOk || len(lines) != maxGlobResults || lines[0] != "f0000.txt" ||
		!strings.Contains(got.Message, "Only the first 1000 matches are listed") {
		t.Fatalf("%d lines, message %q", len(lines), got.Message)
	}
}

// TestBudgetFS checks that a walk stops reading directories when its budget
// is spent or its context is done.
func TestBudgetFS(t *testing.T) {
	mfs := fstest.MapFS{"a/b/c/d.txt": {}, "a/e.txt": {}, "f.txt": {}}
	walk := func(b *budgetFS) []string {
		var got []string
		_ = doublestar.GlobWalk(b, "**/*.txt", func(p string, _ fs.DirEntry) error { got = append(got, p); return nil })
		return got
	}
	full := &budgetFS{FS: mfs, ctx: context.Background(), left: 100}
	if got := walk(full); len(got) != 3 || full.exhausted {
		t.Fatalf("full walk = %v, exhausted %v", got, full.exhausted)
	}
	small := &budgetFS{FS: mfs, ctx: context.Background(), left: 2}
	if got := walk(small); len(got) >= 3 || !small.exhausted {
		t.Fatalf("budget walk = %v, exhausted %v", got, small.exhausted)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := walk(&budgetFS{FS: mfs, ctx: ctx, left: 100}); len(got) != 0 {
		t.Fatalf("cancelled walk = %v", got)
	}
}

func TestGrep(t *testing.T) {
	work := t.TempDir()
	writeTree(t, work, tree)
	writeTree(t, work, map[string]string{
		"ctx.txt":  "a\nb\nMATCH 1\nc\nd\ne\nf\nMATCH 2\nMATCH 3\ng\n",
		"crlf.txt": "first\r\nhello crlf\r\n",
	})
	tests := []struct {
		name, args string
		kind       pluginsdk.ResultKind
		output     string
		message    string
	}{
		{"files with matches by default; .git, node_modules and binaries skipped, dotfiles searched", `{"pattern": "hello"}`, pluginsdk.KindOk,
			".hidden.txt\nREADME.md\ncrlf.txt\nsub/util.go\n", "Found 4 matching files."},
		{"case-insensitive", `{"pattern": "hello", "-i": true, "glob": "*.go"}`, pluginsdk.KindOk, "main.go\nsub/util.go\n", ""},
		{"glob on the name", `{"pattern": "hello", "glob": "*.md"}`, pluginsdk.KindOk, "README.md\n", ""},
		{"glob with a path", `{"pattern": "package", "glob": "sub/**/*.go"}`, pluginsdk.KindOk, "sub/deep/y.go\nsub/util.go\n", ""},
		{"content with line numbers by default", `{"pattern": "[Hh]ello", "output_mode": "content", "glob": "*.go"}`, pluginsdk.KindOk,
			"main.go:4:\tprintln(\"Hello\")\nsub/util.go:3:// Hello says hello.\nsub/util.go:4:func Hello() {}\n", "Found 3 matching lines in 2 files."},
		{"content without line numbers", `{"pattern": "crlf", "output_mode": "content", "-n": false}`, pluginsdk.KindOk,
			"crlf.txt:hello crlf\n", ""},
		{"context lines and group separators", `{"pattern": "MATCH", "output_mode": "content", "path": "ctx.txt", "-C": 1}`, pluginsdk.KindOk,
			"ctx.txt-2-b\nctx.txt:3:MATCH 1\nctx.txt-4-c\n--\nctx.txt-7-f\nctx.txt:8:MATCH 2\nctx.txt:9:MATCH 3\nctx.txt-10-g\n", ""},
		{"-A overrides -C", `{"pattern": "MATCH 1", "output_mode": "content", "path": "ctx.txt", "-C": 1, "-A": 2}`, pluginsdk.KindOk,
			"ctx.txt-2-b\nctx.txt:3:MATCH 1\nctx.txt-4-c\nctx.txt-5-d\n", ""},
		{"-B only", `{"pattern": "MATCH 2", "output_mode": "content", "path": "ctx.txt", "-B": 2}`, pluginsdk.KindOk,
			"ctx.txt-6-e\nctx.txt-7-f\nctx.txt:8:MATCH 2\n", ""},
		{"count", `{"pattern": "MATCH|hello", "output_mode": "count"}`, pluginsdk.KindOk,
			".hidden.txt:1\nREADME.md:2\ncrlf.txt:1\nctx.txt:3\nsub/util.go:1\n", "Found 8 matching lines in 5 files."},
		{"head_limit", `{"pattern": "hello", "head_limit": 2}`, pluginsdk.KindOk, ".hidden.txt\nREADME.md\n",
			"Showing the first 2 results (head_limit); more exist"},
		{"a single file", `{"pattern": "Hello", "path": "sub/util.go", "output_mode": "content"}`, pluginsdk.KindOk,
			"sub/util.go:3:// Hello says hello.\nsub/util.go:4:func Hello() {}\n", ""},
		{"a subdirectory", `{"pattern": "package", "path": "sub"}`, pluginsdk.KindOk, "sub/deep/y.go\nsub/util.go\n", ""},
		{"inside a skipped directory when asked", `{"pattern": "hello", "path": "node_modules"}`, pluginsdk.KindOk,
			"node_modules/pkg/index.js\n", ""},
		{"absolute path", fmt.Sprintf(`{"pattern": "deep", "path": %q}`, filepath.Join(work, "sub")), pluginsdk.KindOk,
			filepath.Join(work, "sub", "deep", "y.go") + "\n", ""},
		{"no match", `{"pattern": "zebra"}`, pluginsdk.KindOk, "", "No matches found."},
		{"invalid regex", `{"pattern": "(unclosed"}`, pluginsdk.KindError, "", "Invalid regular expression"},
		{"missing path", `{"pattern": "x", "path": "nope"}`, pluginsdk.KindError, "", "`nope` does not exist."},
	}
	h := harness(t, work, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.MustCall(t, "Grep", tt.args)
			if got.Kind != tt.kind || got.Text() != tt.output || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("got %+v\nwant output %q", got, tt.output)
			}
		})
	}
}

func TestGrepSchemaFieldNames(t *testing.T) {
	s := compileSchema(t, harness(t, t.TempDir(), nil), "Grep")
	if !validates(t, s, `{"pattern": "x", "-A": 1, "-B": 2, "-C": 3, "-n": true, "-i": false, "head_limit": 0, "output_mode": "count"}`) {
		t.Fatal("the flag-named fields are refused")
	}
	if validates(t, s, `{"pattern": "x", "output_mode": "lines"}`) || validates(t, s, `{"pattern": "x", "-A": -1}`) {
		t.Fatal("bad values accepted")
	}
}
