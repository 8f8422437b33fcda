package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

const (
	// maxGlobResults caps Glob's matches.
	maxGlobResults = 1000
	// maxGlobDirs caps how many directories one Glob call reads, so that a
	// `**` pattern over a huge tree ends in bounded time.
	maxGlobDirs = 20000
)

// GlobParams are Glob's arguments.
type GlobParams struct {
	Pattern     string `json:"pattern" minLength:"1" jsonschema:"The glob pattern, relative to directory: * and ? within a path segment, ** across segments, [abc] classes, {a,b} alternatives. E.g. *.go, src/**/*.ts, cmd/*/main.go."`
	Directory   string `json:"directory,omitempty" jsonschema:"The directory to search in: absolute, or relative to the working directory (the default)."`
	IncludeDirs bool   `json:"include_dirs,omitempty" default:"true" jsonschema:"List matching directories too (shown with a trailing /), as well as files. Defaults to true; false lists files only."`
}

// Glob finds files by name pattern.
type Glob struct{ ws workspace }

// NewGlob constructs Glob from the host's Environment.
func NewGlob(env pluginsdk.Environment) (*Glob, error) {
	ws, err := newWorkspace(env)
	return &Glob{ws: ws}, err
}

var errEnoughMatches = errors.New("enough matches")

// Call lists the matches, sorted.
func (t *Glob) Call(ctx context.Context, p GlobParams) pluginsdk.Result {
	pattern := filepath.ToSlash(p.Pattern)
	if pattern == "" {
		return pluginsdk.Error("pattern is empty.").WithBrief("Invalid pattern")
	}
	if path.IsAbs(pattern) || filepath.IsAbs(p.Pattern) {
		return pluginsdk.Error(fmt.Sprintf("The pattern `%s` is absolute; patterns are relative to directory. Set directory to "+
			"the absolute path and keep the pattern relative, e.g. directory=/path/to/project, pattern=src/**/*.go.", p.Pattern)).
			WithBrief("Invalid pattern")
	}
	if slices.Contains(strings.Split(pattern, "/"), "..") {
		return pluginsdk.Error(fmt.Sprintf("The pattern `%s` goes up with `..`; patterns stay under directory. Set directory "+
			"to the folder to search instead.", p.Pattern)).WithBrief("Invalid pattern")
	}
	if !doublestar.ValidatePattern(pattern) {
		return pluginsdk.Error(fmt.Sprintf("Invalid glob pattern `%s`.", p.Pattern)).WithBrief("Invalid pattern")
	}
	dirShown := p.Directory
	if dirShown == "" {
		dirShown = "the working directory"
	}
	root := t.ws.abs(p.Directory)
	fi, err := os.Stat(root)
	if err != nil {
		return pluginsdk.Error(describeStatError(p.Directory, err)).WithBrief("Directory not found")
	}
	if !fi.IsDir() {
		return pluginsdk.Error(fmt.Sprintf("`%s` is not a directory.", p.Directory)).WithBrief("Not a directory")
	}

	fsys := &budgetFS{FS: os.DirFS(root), ctx: ctx, left: maxGlobDirs}
	var matches []string
	capped := false
	collect := func(rel string, d fs.DirEntry) error {
		if rel == "." || d.IsDir() && !p.IncludeDirs {
			return nil
		}
		if len(matches) == maxGlobResults {
			capped = true
			return errEnoughMatches
		}
		shown := display(p.Directory, root, filepath.Join(root, filepath.FromSlash(rel)))
		if d.IsDir() {
			shown += string(filepath.Separator)
		}
		matches = append(matches, shown)
		return nil
	}
	if dir, name, ok := recursiveName(pattern); ok {
		err = globRecursive(root, dir, name, fsys, collect)
	} else {
		err = doublestar.GlobWalk(fsys, pattern, collect, doublestar.WithNoFollow())
	}
	if ctx.Err() != nil {
		return pluginsdk.Error("The search was cancelled.")
	}
	if err != nil && !errors.Is(err, errEnoughMatches) {
		return pluginsdk.Error(fmt.Sprintf("Glob failed: %v", err)).WithBrief("Glob failed")
	}
	sort.Strings(matches)

	var msg strings.Builder
	if len(matches) == 0 {
		fmt.Fprintf(&msg, "No matches for `%s` in %s.", p.Pattern, dirShown)
	} else {
		fmt.Fprintf(&msg, "Found %s for `%s` in %s.", plural(len(matches), "match", "matches"), p.Pattern, dirShown)
	}
	if capped {
		fmt.Fprintf(&msg, " Only the first %d matches are listed: use a more specific pattern or directory.", maxGlobResults)
	}
	if fsys.exhausted {
		fmt.Fprintf(&msg, " The search stopped after reading %d directories, so the list is incomplete: "+
			"use a more specific pattern (e.g. src/**/*.go rather than **/*.go) or directory.", maxGlobDirs)
	}
	out := strings.Join(matches, "\n")
	if out != "" {
		out += "\n"
	}
	return pluginsdk.Ok(out).WithMessage(msg.String()).WithBrief(plural(len(matches), "match", "matches"))
}

// budgetFS reads at most left directories, and none once ctx is done.
type budgetFS struct {
	fs.FS
	ctx       context.Context
	left      int
	exhausted bool
}

var errBudget = errors.New("directory budget exhausted")

func (b *budgetFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := b.ctx.Err(); err != nil {
		return nil, err
	}
	if b.left <= 0 {
		b.exhausted = true
		return nil, errBudget
	}
	b.left--
	return fs.ReadDir(b.FS, name)
}

func (b *budgetFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(b.FS, name) }
