//go:build unix

package file

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

func TestRecursiveName(t *testing.T) {
	tests := []struct{ pattern, dir, name string }{
		{"**/*.go", ".", "*.go"},
		{"src/**/*_test.go", "src", "*_test.go"},
		{"a/b/**/x", "a/b", "x"},
		{"*.go", "", ""},
		{"**/*.{go,s}", "", ""},
		{"src/*/**/x.go", "", ""},
		{"**/a/*.go", "", ""},
		{"**/**", "", ""},
		{"../**/x", "", ""},
		{`**/\*`, "", ""},
	}
	for _, tt := range tests {
		dir, name, ok := recursiveName(tt.pattern)
		if ok != (tt.dir != "") || dir != tt.dir || name != tt.name {
			t.Errorf("recursiveName(%q) = %q, %q, %v", tt.pattern, dir, name, ok)
		}
	}
}

// TestGlobRecursiveMatchesDoublestar checks that the one-read walk lists
// what doublestar.GlobWalk lists, in the same order, with the same budget.
func TestGlobRecursiveMatchesDoublestar(t *testing.T) {
	work := t.TempDir()
	writeTree(t, work, tree)
	writeTree(t, work, map[string]string{"sub/deep/z.go": "", "sub/deep/er/w.go": "", "a.go/b.go": "", "x/x/x": ""})
	if err := os.Symlink(filepath.Join(work, "sub"), filepath.Join(work, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(work, "sub"), filepath.Join(work, "x", "lsub")); err != nil {
		t.Fatal(err)
	}
	patterns := []string{"**/*.go", "sub/**/*.go", "**/*", "**/deep", "sub/**/*", "**/x*", "linked/**/*.go", "nope/**/*", "main.go/**/*"}
	for _, pattern := range patterns {
		for _, budget := range []int{1000, 1, 2, 3, 4, 5, 7, 9} {
			var want, got []string
			wb := &budgetFS{FS: os.DirFS(work), ctx: context.Background(), left: budget}
			_ = doublestar.GlobWalk(wb, pattern, func(rel string, d fs.DirEntry) error {
				want = append(want, rel)
				return nil
			}, doublestar.WithNoFollow())
			dir, name, ok := recursiveName(pattern)
			if !ok {
				t.Fatalf("%q is not recursive", pattern)
			}
			gb := &budgetFS{FS: os.DirFS(work), ctx: context.Background(), left: budget}
			_ = globRecursive(work, dir, name, gb, func(rel string, d fs.DirEntry) error {
				got = append(got, rel)
				return nil
			})
			if !slices.Equal(got, want) || gb.exhausted != wb.exhausted || gb.left != wb.left {
				t.Fatalf("%q, budget %d:\n got  %v (exhausted %v, left %d)\n want %v (exhausted %v, left %d)",
					pattern, budget, got, gb.exhausted, gb.left, want, wb.exhausted, wb.left)
			}
		}
	}
}
