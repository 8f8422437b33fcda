package file

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

// recursiveName splits a Glob pattern of the common form [DIR/]**/NAME,
// with DIR a plain path and NAME one segment without alternatives; ok is
// false for any other pattern.
func recursiveName(pattern string) (dir, name string, ok bool) {
	if strings.ContainsAny(pattern, "{}\\") {
		return "", "", false
	}
	i := strings.LastIndex(pattern, "/")
	if i < 0 {
		return "", "", false
	}
	head, name := pattern[:i], pattern[i+1:]
	if name == "" || strings.Contains(name, "**") {
		return "", "", false
	}
	if head == "**" {
		return ".", name, true
	}
	dir, found := strings.CutSuffix(head, "/**")
	if !found || dir == "" || strings.ContainsAny(dir, "*?[") {
		return "", "", false
	}
	for _, seg := range strings.Split(dir, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", "", false
		}
	}
	return dir, name, true
}

// globRecursive lists what a [DIR/]**/NAME pattern matches under root as
// doublestar.GlobWalk does over a budgetFS (the same entries, in the same
// order: a directory's matching entries, then each subdirectory's in turn;
// symlinked directories not followed; two directory reads of the budget
// for each directory), but reads each directory once, and the
// subdirectories ahead in the background.
func globRecursive(root, dir, name string, b *budgetFS, fn func(rel string, d fs.DirEntry) error) error {
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil || !fi.IsDir() {
		return nil
	}
	var wg sync.WaitGroup
	lister := startDirLister(1, &wg)
	defer wg.Wait()
	defer close(lister.reqs)
	var walk func(rel string, ready chan dirListing) error
	walk = func(rel string, ready chan dirListing) error {
		// The budget's two reads: one for the matches, one for the subdirectories.
		listMatches, listDirs := b.take(), b.take()
		if !listMatches && !listDirs {
			return nil
		}
		var l dirListing
		if ready != nil {
			l = <-ready
		} else {
			l.entries, l.err = os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		}
		if l.err != nil {
			return nil // doublestar skips an unreadable directory
		}
		if listMatches {
			for _, e := range l.entries {
				if doublestar.MatchUnvalidated(name, e.Name()) {
					if err := fn(path.Join(rel, e.Name()), e); err != nil {
						return err
					}
				}
			}
		}
		if !listDirs {
			return nil
		}
		ahead := make([]chan dirListing, len(l.entries))
		for i, e := range l.entries {
			if e.IsDir() {
				ahead[i] = lister.ahead(filepath.Join(root, filepath.FromSlash(path.Join(rel, e.Name()))))
			}
		}
		for i, e := range l.entries {
			if e.IsDir() {
				if err := walk(path.Join(rel, e.Name()), ahead[i]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(dir, nil)
}

// take spends one directory read of the budget, reporting whether it may
// be done (not when the budget is spent or the context is done).
func (b *budgetFS) take() bool {
	if b.ctx.Err() != nil {
		return false
	}
	if b.left <= 0 {
		b.exhausted = true
		return false
	}
	b.left--
	return true
}
