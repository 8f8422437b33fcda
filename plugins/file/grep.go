package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// The output modes of Grep.
const (
	modeContent = "content"
	modeFiles   = "files_with_matches"
	modeCount   = "count"
)

const defaultHeadLimit = 250

// grepMaxLine bounds the memory one line takes: only the first MiB of a
// longer line (minified code, a one-line data file) is searched.
const grepMaxLine = 1 << 20

// skippedDirs are never descended into (below the search root): version
// control metadata, whatever the ignore files say.
var skippedDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".jj": true, ".bzr": true, ".sl": true}

// dependencyDirs are installed dependencies, left out like ignored files
// unless include_ignored is set (they are nearly always ignored anyway).
var dependencyDirs = map[string]bool{"node_modules": true}

// GrepParams are Grep's arguments.
type GrepParams struct {
	Pattern        string `json:"pattern" minLength:"1" jsonschema:"The regular expression to search for (Go RE2 syntax, like ripgrep's: no lookaround or backreferences). Matched line by line unless multiline is set."`
	Path           string `json:"path,omitempty" jsonschema:"The file or directory to search: absolute, or relative to the working directory (the default)."`
	Glob           string `json:"glob,omitempty" jsonschema:"Only search files whose name matches this glob, e.g. *.go or *.{ts,tsx}; a glob with a / is matched against the path relative to path, e.g. src/**/*.go."`
	OutputMode     string `json:"output_mode,omitempty" default:"files_with_matches" enum:"files_with_matches,content,count" jsonschema:"files_with_matches (the default) lists the files that match; content shows the matching lines (with -A/-B/-C context and -n line numbers); count shows how many lines match in each file."`
	After          int    `json:"-A,omitempty" minimum:"0" jsonschema:"Lines to show after each match (content mode)."`
	Before         int    `json:"-B,omitempty" minimum:"0" jsonschema:"Lines to show before each match (content mode)."`
	Context        int    `json:"-C,omitempty" minimum:"0" jsonschema:"Lines to show before and after each match (content mode); -A and -B override it."`
	LineNumber     bool   `json:"-n,omitempty" default:"true" jsonschema:"Show line numbers (content mode). Defaults to true."`
	IgnoreCase     bool   `json:"-i,omitempty" default:"false" jsonschema:"Match case-insensitively."`
	Type           string `json:"type,omitempty" jsonschema:"Only search files of this type, as ripgrep's --type: e.g. go, py, js, ts, rust, java, c, cpp, md, yaml. Narrower and faster than glob for standard file types."`
	HeadLimit      int    `json:"head_limit,omitempty" default:"250" minimum:"0" jsonschema:"Show at most this many results: files, counts or output lines depending on output_mode (default 250; 0 means no limit)."`
	Offset         int    `json:"offset,omitempty" default:"0" minimum:"0" jsonschema:"Skip this many results (files, counts or output lines) before head_limit applies, to page through a long result: the next page starts at offset + head_limit."`
	Multiline      bool   `json:"multiline,omitempty" default:"false" jsonschema:"Match across lines: the pattern sees each whole file, . matches newlines and ^/$ match at line boundaries (ripgrep's -U --multiline-dotall). Every line a match touches is a matching line."`
	IncludeIgnored bool   `json:"include_ignored,omitempty" default:"false" jsonschema:"Also search files that .gitignore, .git/info/exclude or .ignore rules exclude, and node_modules: build outputs, dependencies. Version control directories stay skipped."`
}

// Grep searches file contents with a regular expression.
type Grep struct{ ws workspace }

// NewGrep constructs Grep from the host's Environment.
func NewGrep(env pluginsdk.Environment) (*Grep, error) {
	ws, err := newWorkspace(env)
	return &Grep{ws: ws}, err
}

// Call runs the search.
func (t *Grep) Call(ctx context.Context, p GrepParams) pluginsdk.Result {
	if p.Pattern == "" {
		return pluginsdk.Error("pattern is empty.").WithBrief("Invalid pattern")
	}
	expr := p.Pattern
	if p.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Invalid regular expression `%s`: %v", p.Pattern, err)).WithBrief("Invalid pattern")
	}
	mode := p.OutputMode
	if mode == "" {
		mode = modeFiles
	}
	if mode != modeContent && mode != modeFiles && mode != modeCount {
		return pluginsdk.Error(fmt.Sprintf("Unknown output_mode %q: use content, files_with_matches or count.", mode)).
			WithBrief("Invalid output_mode")
	}
	glob := filepath.ToSlash(p.Glob)
	if glob != "" && !doublestar.ValidatePattern(glob) {
		return pluginsdk.Error(fmt.Sprintf("Invalid glob `%s`.", p.Glob)).WithBrief("Invalid glob")
	}
	var ofType func(string) bool
	if p.Type != "" {
		globs, ok := fileTypes[p.Type]
		if !ok {
			return pluginsdk.Error(fmt.Sprintf("Unknown type `%s`: use one of %s, or a glob.", p.Type, strings.Join(fileTypeNames(), ", "))).
				WithBrief("Invalid type")
		}
		ofType = typeMatcher(globs)
	}
	if p.After < 0 || p.Before < 0 || p.Context < 0 || p.HeadLimit < 0 || p.Offset < 0 {
		return pluginsdk.Error("-A, -B, -C, head_limit and offset must not be negative.").WithBrief("Invalid arguments")
	}
	s := &searcher{re: re, mode: mode, before: p.Context, after: p.Context, lineNumbers: p.LineNumber, multiline: p.Multiline}
	if p.Before > 0 {
		s.before = p.Before
	}
	if p.After > 0 {
		s.after = p.After
	}
	if p.HeadLimit > 0 {
		s.capLines = p.Offset + p.HeadLimit + 2
	}
	if p.Multiline {
		if s.re, err = regexp.Compile("(?ms)" + expr); err != nil {
			return pluginsdk.Error(fmt.Sprintf("Invalid regular expression `%s`: %v", p.Pattern, err)).WithBrief("Invalid pattern")
		}
	} else {
		s.lit, s.fold = requiredLiteral(expr)
		if s.fold {
			s.foldAlts = foldAlternates(s.lit)
			s.folder = newFoldFinder(s.lit)
		}
		if len(s.lit) == 0 {
			s.dfaProg = newDFAProg(expr)
		}
	}
	c := &collector{mode: mode, context: s.before > 0 || s.after > 0, offset: p.Offset, limit: p.HeadLimit}

	root := t.ws.abs(p.Path)
	fi, err := os.Stat(root)
	if err != nil {
		return pluginsdk.Error(describeStatError(p.Path, err)).WithBrief("Path not found")
	}
	switch {
	case fi.Mode().IsRegular():
		c.add(newWorker(s).search(ctx, root, p.Path), p.Path)
	case fi.IsDir():
		w := &walker{ctx: ctx, skipDirs: skippedDirs}
		if !p.IncludeIgnored {
			w.skipDirs = map[string]bool{}
			for d := range skippedDirs {
				w.skipDirs[d] = true
			}
			for d := range dependencyDirs {
				w.skipDirs[d] = true
			}
			w.rules = newIgnoreRules(root)
		}
		if glob != "" || ofType != nil {
			w.keep = func(rel, name string) bool {
				if ofType != nil && !ofType(name) {
					return false
				}
				if glob == "" {
					return true
				}
				if !strings.Contains(glob, "/") {
					return doublestar.MatchUnvalidated(glob, name)
				}
				return doublestar.MatchUnvalidated(glob, rel)
			}
		}
		err = searchTree(ctx, root, newShower(p.Path), w, s, c)
		c.unreadable += w.unreadable
	default:
		return pluginsdk.Error(fmt.Sprintf("`%s` is not a file or directory.", p.Path)).WithBrief("Invalid path")
	}
	if ctx.Err() != nil {
		return pluginsdk.Error("The search was cancelled.")
	}
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Grep failed: %v", err)).WithBrief("Grep failed")
	}
	return c.result()
}

// searchTree searches the files under root: a walker lists them in order,
// workers (one per CPU) search them in parallel, in batches of files that
// come one after another, and the results are taken in the walk's order, so
// the output is the same as a search one file after another. It stops early
// once head_limit is reached.
func searchTree(ctx context.Context, root string, sh shower, w *walker, s *searcher, c *collector) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type batch struct {
		paths, shown []string
		res          []fileResult
		done         chan struct{}
	}
	jobs := make(chan *batch, 16)
	order := make(chan *batch, 64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := newWorker(s)
			for b := range jobs {
				for i, p := range b.paths {
					b.res[i] = wk.search(ctx, p, b.shown[i])
				}
				close(b.done)
			}
		}()
	}
	w.ctx = ctx
	w.lister = startDirLister(1, &wg)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		defer close(w.lister.reqs)
		var cur *batch
		send := func() error {
			b := cur
			cur = nil
			b.res = make([]fileResult, len(b.paths))
			select {
			case order <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case jobs <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		}
		err := w.walk(root, func(path, rel string) error {
			if cur == nil {
				cur = &batch{done: make(chan struct{})}
			}
			cur.paths = append(cur.paths, path)
			cur.shown = append(cur.shown, sh.show(rel))
			if len(cur.paths) == searchBatch {
				return send()
			}
			return nil
		})
		if err == nil && cur != nil {
			_ = send()
		}
	}()
	var err error
loop:
	for b := range order {
		select {
		case <-b.done:
		case <-ctx.Done():
			err = ctx.Err()
			break loop
		}
		for i, r := range b.res {
			if !c.add(r, b.shown[i]) {
				break loop
			}
		}
	}
	cancel()
	wg.Wait()
	return err
}

// searchBatch is how many files a worker takes at a time: enough to make
// the hand-over cheap, few enough to keep both workers busy to the end.
const searchBatch = 16

// collector assembles the output from the files' results in order, applying
// offset and head_limit to the output lines.
type collector struct {
	mode          string
	context       bool // context lines are on: groups are separated by "--"
	offset, limit int  // limit 0: none

	produced   int // output lines so far, those skipped by offset included
	out        []string
	more       bool // results beyond offset + limit exist
	files      int  // files with a match
	lines      int  // matching lines
	unreadable int
	tooLarge   int
}

// emit adds an output line; false means the limit is reached and the search
// can stop.
func (c *collector) emit(line string) bool {
	if c.limit > 0 && c.produced >= c.offset+c.limit {
		c.more = true
		return false
	}
	if c.produced >= c.offset {
		c.out = append(c.out, line)
	}
	c.produced++
	return true
}

// add takes one file's result; false means the search can stop.
func (c *collector) add(r fileResult, shown string) bool {
	if r.unreadable {
		c.unreadable++
	}
	if r.tooLarge {
		c.tooLarge++
	}
	if r.matched == 0 {
		return true
	}
	switch c.mode {
	case modeFiles:
		c.lines++
		c.files++
		return c.emit(shown)
	case modeCount:
		c.lines += r.matched
		c.files++
		return c.emit(shown + ":" + strconv.Itoa(r.matched))
	}
	for _, ch := range r.chunks {
		if ch.match {
			c.lines++
		}
		if ch.sep && c.context && c.produced > 0 && !c.emit("--") {
			return false
		}
		for _, l := range ch.lines {
			if !c.emit(l) {
				return false
			}
		}
	}
	c.files++
	return true
}

func (c *collector) result() pluginsdk.Result {
	out := strings.Join(c.out, "\n")
	if out != "" {
		out += "\n"
	}
	var msg strings.Builder
	switch {
	case len(c.out) == 0 && c.offset > 0 && c.produced > 0:
		fmt.Fprintf(&msg, "No results past offset %d: the search has %s.", c.offset, plural(c.produced, "result", "results"))
	case len(c.out) == 0:
		msg.WriteString("No matches found.")
	case c.more && c.offset > 0:
		fmt.Fprintf(&msg, "Showing results %d to %d (offset, head_limit); more exist: use offset=%d for the next page, or narrow the search (path, glob, type, pattern).",
			c.offset+1, c.offset+len(c.out), c.offset+len(c.out))
	case c.more:
		fmt.Fprintf(&msg, "Showing the first %d results (head_limit); more exist: narrow the search (path, glob, pattern) or raise head_limit.", c.limit)
	case c.mode == modeContent, c.mode == modeCount:
		fmt.Fprintf(&msg, "Found %s in %s.", plural(c.lines, "matching line", "matching lines"), plural(c.files, "file", "files"))
	default:
		fmt.Fprintf(&msg, "Found %s.", plural(c.files, "matching file", "matching files"))
	}
	if c.offset > 0 && len(c.out) > 0 && !c.more {
		fmt.Fprintf(&msg, " Results %d to %d are shown (offset %d).", c.offset+1, c.offset+len(c.out), c.offset)
	}
	if c.unreadable > 0 {
		fmt.Fprintf(&msg, " %s could not be read.", plural(c.unreadable, "file or directory", "files or directories"))
	}
	if c.tooLarge > 0 {
		fmt.Fprintf(&msg, " %s larger than %d MiB not searched (multiline).", plural(c.tooLarge, "file", "files"), maxMultilineFile>>20)
	}
	return pluginsdk.Ok(out).WithMessage(msg.String()).WithBrief(plural(c.files, "file", "files"))
}
