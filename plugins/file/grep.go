package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

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
// control metadata and installed dependencies. Grep does not read .gitignore.
var skippedDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".jj": true, "node_modules": true}

// GrepParams are Grep's arguments.
type GrepParams struct {
	Pattern    string `json:"pattern" minLength:"1" jsonschema:"The regular expression to search for (Go RE2 syntax, like ripgrep's: no lookaround or backreferences). Matched line by line."`
	Path       string `json:"path,omitempty" jsonschema:"The file or directory to search: absolute, or relative to the working directory (the default)."`
	Glob       string `json:"glob,omitempty" jsonschema:"Only search files whose name matches this glob, e.g. *.go or *.{ts,tsx}; a glob with a / is matched against the path relative to path, e.g. src/**/*.go."`
	OutputMode string `json:"output_mode,omitempty" default:"files_with_matches" enum:"files_with_matches,content,count" jsonschema:"files_with_matches (the default) lists the files that match; content shows the matching lines (with -A/-B/-C context and -n line numbers); count shows how many lines match in each file."`
	After      int    `json:"-A,omitempty" minimum:"0" jsonschema:"Lines to show after each match (content mode)."`
	Before     int    `json:"-B,omitempty" minimum:"0" jsonschema:"Lines to show before each match (content mode)."`
	Context    int    `json:"-C,omitempty" minimum:"0" jsonschema:"Lines to show before and after each match (content mode); -A and -B override it."`
	LineNumber bool   `json:"-n,omitempty" default:"true" jsonschema:"Show line numbers (content mode). Defaults to true."`
	IgnoreCase bool   `json:"-i,omitempty" default:"false" jsonschema:"Match case-insensitively."`
	HeadLimit  int    `json:"head_limit,omitempty" default:"250" minimum:"0" jsonschema:"Show at most this many results: files, counts or output lines depending on output_mode (default 250; 0 means no limit)."`
}

// Grep searches file contents with a regular expression.
type Grep struct{ ws workspace }

// NewGrep constructs Grep from the host's Environment.
func NewGrep(env pluginsdk.Environment) (*Grep, error) {
	ws, err := newWorkspace(env)
	return &Grep{ws: ws}, err
}

var errHeadLimit = errors.New("head limit reached")

// grepRun is one search's state.
type grepRun struct {
	ctx           context.Context
	re            *regexp.Regexp
	mode          string
	before, after int
	lineNumbers   bool
	limit         int // 0: none

	out        []string
	more       bool // results beyond limit were found
	files      int  // files with a match
	lines      int  // matching lines
	unreadable int
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
	if p.After < 0 || p.Before < 0 || p.Context < 0 || p.HeadLimit < 0 {
		return pluginsdk.Error("-A, -B, -C and head_limit must not be negative.").WithBrief("Invalid arguments")
	}
	g := &grepRun{ctx: ctx, re: re, mode: mode, before: p.Context, after: p.Context, lineNumbers: p.LineNumber, limit: p.HeadLimit}
	if p.Before > 0 {
		g.before = p.Before
	}
	if p.After > 0 {
		g.after = p.After
	}

	root := t.ws.abs(p.Path)
	fi, err := os.Stat(root)
	if err != nil {
		return pluginsdk.Error(describeStatError(p.Path, err)).WithBrief("Path not found")
	}
	if fi.Mode().IsRegular() {
		shown := p.Path
		err = g.searchFile(root, shown)
	} else if fi.IsDir() {
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				g.unreadable++
				return nil
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if d.IsDir() {
				if path != root && skippedDirs[d.Name()] {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() { // symlinks are not followed
				return nil
			}
			if glob != "" && !matchGlob(glob, root, path) {
				return nil
			}
			return g.searchFile(path, display(p.Path, root, path))
		})
	} else {
		return pluginsdk.Error(fmt.Sprintf("`%s` is not a file or directory.", p.Path)).WithBrief("Invalid path")
	}
	if ctx.Err() != nil {
		return pluginsdk.Error("The search was cancelled.")
	}
	if err != nil && !errors.Is(err, errHeadLimit) {
		return pluginsdk.Error(fmt.Sprintf("Grep failed: %v", err)).WithBrief("Grep failed")
	}
	return g.result()
}

func matchGlob(glob, root, path string) bool {
	if !strings.Contains(glob, "/") {
		return doublestar.MatchUnvalidated(glob, filepath.Base(path))
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && doublestar.MatchUnvalidated(glob, filepath.ToSlash(rel))
}

// emit adds an output line, failing with errHeadLimit past the limit.
func (g *grepRun) emit(line string) error {
	if g.limit > 0 && len(g.out) >= g.limit {
		g.more = true
		return errHeadLimit
	}
	g.out = append(g.out, line)
	return nil
}

// searchFile searches one file; binary and unreadable files are skipped.
func (g *grepRun) searchFile(path, shown string) error {
	f, err := os.Open(path)
	if err != nil {
		g.unreadable++
		return nil
	}
	defer f.Close()
	if binary, err := sniff(f); err != nil || binary {
		return nil
	}
	br := bufio.NewReaderSize(f, 64<<10)
	type ctxLine struct {
		n    int
		text string
	}
	var ring []ctxLine // the last g.before lines
	lastShown, afterLeft, count := 0, 0, 0
	line := func(n int, text string, match bool) string {
		mark := "-"
		if match {
			mark = ":"
		}
		if g.lineNumbers {
			return fmt.Sprintf("%s%s%d%s%s", shown, mark, n, mark, text)
		}
		return shown + mark + text
	}
	for n := 1; ; n++ {
		if n%1024 == 0 && g.ctx.Err() != nil {
			return g.ctx.Err()
		}
		raw, _, err := readLine(br, grepMaxLine)
		if len(raw) == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				g.unreadable++
			}
			break
		}
		raw = bytes.TrimSuffix(raw, []byte("\r"))
		if !g.re.Match(raw) {
			if g.mode == modeContent {
				text := strings.ToValidUTF8(string(raw), "\uFFFD")
				if afterLeft > 0 {
					afterLeft--
					lastShown = n
					if err := g.emit(line(n, text, false)); err != nil {
						return err
					}
				} else if g.before > 0 {
					ring = append(ring, ctxLine{n, text})
					if len(ring) > g.before {
						ring = ring[1:]
					}
				}
			}
			continue
		}
		count++
		g.lines++
		switch g.mode {
		case modeFiles:
			g.files++
			return g.emit(shown)
		case modeContent:
			first := n
			if len(ring) > 0 {
				first = ring[0].n
			}
			if len(g.out) > 0 && (lastShown == 0 || first > lastShown+1) && (g.before > 0 || g.after > 0) {
				if err := g.emit("--"); err != nil {
					return err
				}
			}
			for _, c := range ring {
				if err := g.emit(line(c.n, c.text, false)); err != nil {
					return err
				}
			}
			ring = ring[:0]
			if err := g.emit(line(n, strings.ToValidUTF8(string(raw), "\uFFFD"), true)); err != nil {
				return err
			}
			lastShown, afterLeft = n, g.after
		}
	}
	if count > 0 {
		g.files++
		if g.mode == modeCount {
			return g.emit(fmt.Sprintf("%s:%d", shown, count))
		}
	}
	return nil
}

func (g *grepRun) result() pluginsdk.Result {
	out := strings.Join(g.out, "\n")
	if out != "" {
		out += "\n"
	}
	var msg strings.Builder
	switch {
	case len(g.out) == 0:
		msg.WriteString("No matches found.")
	case g.more:
		fmt.Fprintf(&msg, "Showing the first %d results (head_limit); more exist: narrow the search (path, glob, pattern) or raise head_limit.", g.limit)
	case g.mode == modeContent, g.mode == modeCount:
		fmt.Fprintf(&msg, "Found %s in %s.", plural(g.lines, "matching line", "matching lines"), plural(g.files, "file", "files"))
	default:
		fmt.Fprintf(&msg, "Found %s.", plural(g.files, "matching file", "matching files"))
	}
	if g.unreadable > 0 {
		fmt.Fprintf(&msg, " %s could not be read.", plural(g.unreadable, "file or directory", "files or directories"))
	}
	return pluginsdk.Ok(out).WithMessage(msg.String()).WithBrief(plural(g.files, "file", "files"))
}
