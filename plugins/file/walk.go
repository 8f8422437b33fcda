package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// walker lists the regular files under a directory in a fixed order: depth
// first, the entries of each directory in byte order of their names (so a
// directory's files and subdirectories are interleaved by name, as
// filepath.WalkDir does). Symlinks are not followed.
type walker struct {
	ctx context.Context
	// skipDirs are directory names never descended into (below the root).
	skipDirs map[string]bool
	// rules, when not nil, are the ignore files in force: ignored entries are
	// left out and ignored directories not read.
	rules *ignoreRules
	// keep, when not nil, says whether a file (its path relative to the
	// root, slash-separated, and its name) is listed.
	keep func(rel, name string) bool

	unreadable int      // directories that could not be read
	segs       []string // the current path's segments under the rules' top
}

// walk calls visit for each file under root, in order, with its absolute
// path and its path relative to root (OS separators). It stops at the first
// error visit returns, or when the context is done.
func (w *walker) walk(root string, visit func(path, rel string) error) error {
	if w.rules != nil {
		w.segs = append(w.segs[:0], w.rules.top...)
	}
	return w.dir(root, "", visit)
}

func (w *walker) dir(dir, rel string, visit func(path, rel string) error) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir) // sorted by name; on error, those read so far
	if err != nil {
		w.unreadable++
	}
	if w.rules != nil {
		hasGitignore, hasIgnore := false, false
		for _, e := range entries {
			switch e.Name() {
			case gitignoreName:
				hasGitignore = !e.IsDir()
			case ignoreName:
				hasIgnore = !e.IsDir()
			}
		}
		if hasGitignore || hasIgnore {
			defer w.rules.leave(w.rules.enter(dir, w.segs, hasGitignore, hasIgnore))
		}
	}
	depth := len(w.segs)
	sep := string(filepath.Separator)
	for _, e := range entries {
		name := e.Name()
		t := e.Type()
		if !t.IsDir() && !t.IsRegular() {
			continue // symlinks, devices, sockets
		}
		if t.IsDir() && w.skipDirs[name] {
			continue
		}
		if w.rules != nil {
			w.segs = append(w.segs[:depth], name)
			ignored := w.rules.ignored(w.segs, t.IsDir())
			if ignored {
				continue
			}
		}
		path := dir + sep + name
		if strings.HasSuffix(dir, sep) {
			path = dir + name
		}
		childRel := name
		if rel != "" {
			childRel = rel + sep + name
		}
		if t.IsDir() {
			if err := w.dir(path, childRel, visit); err != nil {
				return err
			}
			w.segs = w.segs[:depth]
			continue
		}
		if w.keep != nil && !w.keep(filepath.ToSlash(childRel), name) {
			continue
		}
		if err := visit(path, childRel); err != nil {
			return err
		}
	}
	if w.rules != nil {
		w.segs = w.segs[:depth]
	}
	return nil
}

// shower turns a path relative to the search root into what the model sees,
// as display does: joined to the root as the model gave it, or left relative
// to the work dir when it gave none.
type shower struct{ base string }

func newShower(given string) shower {
	if given == "" {
		return shower{}
	}
	base := filepath.Clean(given)
	if base == "." {
		return shower{}
	}
	if !strings.HasSuffix(base, string(filepath.Separator)) {
		base += string(filepath.Separator)
	}
	return shower{base: base}
}

func (s shower) show(rel string) string { return s.base + rel }
