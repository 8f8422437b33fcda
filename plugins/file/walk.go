package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

	// lister, when not nil, reads directories ahead of the walk.
	lister *dirLister

	unreadable int      // directories that could not be read
	segs       []string // the current path's segments under the rules' top
}

// dirListing is a directory's entries, sorted by name, and the error that
// cut the reading short.
type dirListing struct {
	entries []os.DirEntry
	err     error
}

// dirLister reads directories in the background, so that the walk finds a
// directory's entries ready when it gets there.
type dirLister struct {
	reqs chan dirReq
}

type dirReq struct {
	path string
	res  chan dirListing
}

// startDirLister starts n readers; stop them by closing reqs.
func startDirLister(n int, wg *sync.WaitGroup) *dirLister {
	l := &dirLister{reqs: make(chan dirReq, 256)}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range l.reqs {
				entries, err := os.ReadDir(r.path)
				r.res <- dirListing{entries, err}
			}
		}()
	}
	return l
}

// ahead asks for path's entries to be read in the background; nil when the
// readers are busy with enough already (the walk then reads it itself).
func (l *dirLister) ahead(path string) chan dirListing {
	r := dirReq{path: path, res: make(chan dirListing, 1)}
	select {
	case l.reqs <- r:
		return r.res
	default:
		return nil
	}
}

// walk calls visit for each file under root, in order, with its absolute
// path and its path relative to root (OS separators). It stops at the first
// error visit returns, or when the context is done.
func (w *walker) walk(root string, visit func(path, rel string) error) error {
	if w.rules != nil {
		w.segs = append(w.segs[:0], w.rules.top...)
	}
	return w.dir(root, "", nil, visit)
}

func (w *walker) dir(dir, rel string, ready chan dirListing, visit func(path, rel string) error) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	var l dirListing
	if ready != nil {
		select {
		case l = <-ready:
		case <-w.ctx.Done():
			return w.ctx.Err()
		}
	} else {
		l.entries, l.err = os.ReadDir(dir) // sorted by name; on error, those read so far
	}
	entries := l.entries
	if l.err != nil {
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
	join := func(name string) string {
		if strings.HasSuffix(dir, sep) {
			return dir + name
		}
		return dir + sep + name
	}
	// First the entries to walk, asking for the subdirectories to be read
	// ahead; then the walk, in order.
	kept := make([]bool, len(entries))
	var ahead []chan dirListing
	for i, e := range entries {
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
			if w.rules.ignored(w.segs, t.IsDir()) {
				continue
			}
		}
		kept[i] = true
		if t.IsDir() && w.lister != nil {
			if ahead == nil {
				ahead = make([]chan dirListing, len(entries))
			}
			ahead[i] = w.lister.ahead(join(name))
		}
	}
	for i, e := range entries {
		if !kept[i] {
			continue
		}
		name := e.Name()
		path := join(name)
		childRel := name
		if rel != "" {
			childRel = rel + sep + name
		}
		if e.Type().IsDir() {
			var ready chan dirListing
			if ahead != nil {
				ready = ahead[i]
			}
			if w.rules != nil {
				w.segs = append(w.segs[:depth], name)
			}
			if err := w.dir(path, childRel, ready, visit); err != nil {
				return err
			}
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
