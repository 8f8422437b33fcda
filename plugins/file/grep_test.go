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

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// repoTree is a Git repository (a .git directory is enough) with ignore
// files at several levels.
var repoTree = map[string]string{
	".git/HEAD":                 "ref: refs/heads/main\n",
	".git/info/exclude":         "# local\nexcluded.txt\n",
	".gitignore":                "build/\n*.log\n!keep.log\n",
	".ignore":                   "by-dotignore.txt\n",
	"main.go":                   "needle\n",
	"app.log":                   "needle\n",
	"keep.log":                  "needle\n",
	"excluded.txt":              "needle\n",
	"by-dotignore.txt":          "needle\n",
	"build/out.txt":             "needle\n",
	"node_modules/pkg/index.js": "needle\n",
	"sub/.gitignore":            "secret.txt\n",
	"sub/secret.txt":            "needle\n",
	"sub/open.txt":              "needle\n",
	"sub/deep/trace.log":        "needle\n",
	"other/secret.txt":          "needle\n",
}

func TestGrepIgnoreFiles(t *testing.T) {
	work := t.TempDir()
	writeTree(t, work, repoTree)
	all := "app.log\nbuild/out.txt\nby-dotignore.txt\nexcluded.txt\nkeep.log\nmain.go\nnode_modules/pkg/index.js\nother/secret.txt\nsub/deep/trace.log\nsub/open.txt\nsub/secret.txt\n"
	tests := []struct {
		name, args, output string
	}{
		{"ignored files are left out by default", `{"pattern": "needle"}`, "keep.log\nmain.go\nother/secret.txt\nsub/open.txt\n"},
		{"include_ignored searches them", `{"pattern": "needle", "include_ignored": true}`, all},
		{"a parent's .gitignore applies below path", `{"pattern": "needle", "path": "sub"}`, "sub/open.txt\n"},
		{"a path naming an ignored file is searched", `{"pattern": "needle", "path": "app.log"}`, "app.log\n"},
		{"a path inside an ignored directory is searched", `{"pattern": "needle", "path": "build"}`, "build/out.txt\n"},
	}
	h := harness(t, work, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.MustCall(t, "Grep", tt.args)
			if got.Kind != pluginsdk.KindOk || got.Text() != tt.output {
				t.Fatalf("got %+v\nwant output %q", got, tt.output)
			}
		})
	}
}

// TestGrepIgnoreOutsideRepo checks that .gitignore counts only inside a
// Git repository, as with ripgrep, while .ignore counts anywhere.
func TestGrepIgnoreOutsideRepo(t *testing.T) {
	work := t.TempDir()
	writeTree(t, work, map[string]string{
		".gitignore": "a.txt\n", ".ignore": "b.txt\n", "a.txt": "x\n", "b.txt": "x\n", "c.txt": "x\n",
	})
	got := harness(t, work, nil).MustCall(t, "Grep", `{"pattern": "^x$"}`)
	if got.Text() != "a.txt\nc.txt\n" {
		t.Fatalf("got %+v", got)
	}
}

// TestGrepIgnoreLinkedWorktree checks that a linked worktree's .git file
// leads to the repository's info/exclude.
func TestGrepIgnoreLinkedWorktree(t *testing.T) {
	base := t.TempDir()
	writeTree(t, base, map[string]string{
		"repo/.git/info/exclude":           "local.txt\n",
		"repo/.git/worktrees/wt/commondir": "../..\n",
		"repo/.git/worktrees/wt/HEAD":      "ref: refs/heads/wt\n",
		"wt/local.txt":                     "x\n",
		"wt/kept.txt":                      "x\n",
	})
	gitFile := "gitdir: " + filepath.Join(base, "repo", ".git", "worktrees", "wt") + "\n"
	if err := os.WriteFile(filepath.Join(base, "wt", ".git"), []byte(gitFile), 0o644); err != nil {
		t.Fatal(err)
	}
	got := harness(t, filepath.Join(base, "wt"), nil).MustCall(t, "Grep", `{"pattern": "^x$"}`)
	if got.Text() != "kept.txt\n" {
		t.Fatalf("got %+v", got)
	}
}

func TestGrepParameters(t *testing.T) {
	work := t.TempDir()
	writeTree(t, work, map[string]string{
		"a.go":       "package a\n\nfunc A() {\n\tprintln(\"a\")\n}\n",
		"b.py":       "def b():\n    print('b')\n",
		"c.ts":       "function c() {}\n",
		"Makefile":   "all:\n\techo make\n",
		"multi.txt":  "start here\nmiddle\nend here\nother\n",
		"lines.txt":  "l1\nl2\nl3\nl4\nl5\n",
		"order/x.md": "x\n",
		"order.md":   "x\n",
		"order-a.md": "x\n",
	})
	tests := []struct {
		name, args string
		kind       pluginsdk.ResultKind
		output     string
		message    string
	}{
		{"type go", `{"pattern": "a|b|c", "type": "go"}`, pluginsdk.KindOk, "a.go\n", ""},
		{"type py", `{"pattern": "print", "type": "py"}`, pluginsdk.KindOk, "b.py\n", ""},
		{"type make matches a file name", `{"pattern": "echo", "type": "make"}`, pluginsdk.KindOk, "Makefile\n", ""},
		{"type and glob together", `{"pattern": ".", "type": "ts", "glob": "c*"}`, pluginsdk.KindOk, "c.ts\n", ""},
		{"unknown type", `{"pattern": "x", "type": "klingon"}`, pluginsdk.KindError, "", "Unknown type `klingon`: use one of c, cpp,"},
		{"walk order: a directory's entries by name", `{"pattern": "x", "glob": "*.md"}`, pluginsdk.KindOk, "order/x.md\norder-a.md\norder.md\n", ""},
		{"offset and head_limit page through lines", `{"pattern": "l", "path": "lines.txt", "output_mode": "content", "offset": 1, "head_limit": 2}`, pluginsdk.KindOk,
			"lines.txt:2:l2\nlines.txt:3:l3\n", "Showing results 2 to 3 (offset, head_limit); more exist: use offset=3 for the next page"},
		{"the last page", `{"pattern": "l", "path": "lines.txt", "output_mode": "content", "offset": 3, "head_limit": 2}`, pluginsdk.KindOk,
			"lines.txt:4:l4\nlines.txt:5:l5\n", "Results 4 to 5 are shown (offset 3)."},
		{"offset past the end", `{"pattern": "l", "path": "lines.txt", "output_mode": "content", "offset": 9}`, pluginsdk.KindOk,
			"", "No results past offset 9: the search has 5 results."},
		{"offset counts files", `{"pattern": "x", "glob": "*.md", "offset": 2}`, pluginsdk.KindOk, "order.md\n", ""},
		{"multiline content", `{"pattern": "start.*end", "path": "multi.txt", "output_mode": "content", "multiline": true}`, pluginsdk.KindOk,
			"multi.txt:1:start here\nmulti.txt:2:middle\nmulti.txt:3:end here\n", "Found 3 matching lines in 1 file."},
		{"multiline with context", `{"pattern": "middle\nend", "path": "multi.txt", "output_mode": "content", "multiline": true, "-A": 1}`, pluginsdk.KindOk,
			"multi.txt:2:middle\nmulti.txt:3:end here\nmulti.txt-4-other\n", ""},
		{"multiline count", `{"pattern": "here$", "path": "multi.txt", "output_mode": "count", "multiline": true}`, pluginsdk.KindOk, "multi.txt:2\n", ""},
		{"without multiline a pattern stays in a line", `{"pattern": "start.*end", "path": "multi.txt"}`, pluginsdk.KindOk, "", "No matches found."},
		{"negative offset", `{"pattern": "x", "offset": -1}`, pluginsdk.KindError, "", ""},
	}
	h := harness(t, work, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.MustCall(t, "Grep", tt.args)
			if got.Kind != tt.kind || got.Text() != tt.output || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("got %+v\nwant output %q, message %q", got, tt.output, tt.message)
			}
		})
	}
}

// TestGrepOrderUnderParallelism checks, on a tree with many files, that the
// parallel search gives the results in the order of a sequential walk, and
// that head_limit takes the first ones of that order.
func TestGrepOrderUnderParallelism(t *testing.T) {
	work := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		for j := range 30 {
			content := "nothing\n"
			if (i+j)%3 == 0 {
				content = fmt.Sprintf("line\nhit %d %d\n", i, j)
			}
			files[fmt.Sprintf("d%d/f%d.txt", i, j)] = content
		}
	}
	writeTree(t, work, files)
	var want []string
	_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.Contains(readFile(t, p), "hit") {
			rel, _ := filepath.Rel(work, p)
			want = append(want, rel)
		}
		return nil
	})
	h := harness(t, work, nil)
	got := h.MustCall(t, "Grep", `{"pattern": "hit", "head_limit": 0}`)
	if got.Text() != strings.Join(want, "\n")+"\n" {
		t.Fatalf("order differs:\n%s\nwant\n%s", got.Text(), strings.Join(want, "\n"))
	}
	got = h.MustCall(t, "Grep", `{"pattern": "hit", "head_limit": 7}`)
	if got.Text() != strings.Join(want[:7], "\n")+"\n" || !strings.Contains(got.Message, "more exist") {
		t.Fatalf("head_limit: got %+v", got)
	}
	got = h.MustCall(t, "Grep", `{"pattern": "hit", "output_mode": "content", "-B": 1, "head_limit": 5}`)
	wantContent := want[0] + "-1-line\n" + want[0] + ":2:hit 0 0\n--\n" + want[1] + "-1-line\n" + want[1] + ":2:hit 0 12\n"
	if got.Text() != wantContent {
		t.Fatalf("content with context: got %q, want %q", got.Text(), wantContent)
	}
}

func TestGrepCancelled(t *testing.T) {
	work := t.TempDir()
	writeTree(t, work, map[string]string{"a/b.txt": "x\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := &Grep{ws: workspace{dir: work}}
	if got := g.Call(ctx, GrepParams{Pattern: "x"}); got.Kind != pluginsdk.KindError || got.Message != "The search was cancelled." {
		t.Fatalf("got %+v", got)
	}
}

func TestGrepMultilineTooLarge(t *testing.T) {
	old := maxMultilineFile
	maxMultilineFile = 10
	t.Cleanup(func() { maxMultilineFile = old })
	work := t.TempDir()
	writeTree(t, work, map[string]string{"big.txt": "x\nmore than ten bytes\n", "small.txt": "x\n"})
	g := &Grep{ws: workspace{dir: work}}
	got := g.Call(context.Background(), GrepParams{Pattern: "x", Multiline: true})
	if got.Kind != pluginsdk.KindOk || !strings.Contains(got.Message, "1 file larger than 0 MiB not searched (multiline)") {
		t.Fatalf("got %+v", got)
	}
}
