package file

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// The ignore files a search honours, as ripgrep does: .gitignore inside a Git
// repository (with the repository's .git/info/exclude), and .ignore anywhere.
const (
	gitignoreName = ".gitignore"
	ignoreName    = ".ignore"
)

// ignoreRules holds the ignore patterns in force at one point of a walk, in
// increasing priority (a deeper directory's rules after its parents', a
// .ignore after the .gitignore beside it). Pattern matching is go-git's.
type ignoreRules struct {
	inRepo   bool     // the walk is inside a Git repository: .gitignore counts
	top      []string // the walk's root, as path segments under the repository root
	patterns []gitignore.Pattern
}

// newIgnoreRules gathers the rules that apply at root: those of the Git
// repository root holds (.git/info/exclude, then the .gitignore and .ignore
// files of each directory from the repository root down to root's parent).
// The files in root itself are read by the walk.
func newIgnoreRules(root string) *ignoreRules {
	r := &ignoreRules{}
	repo, gitPath := findRepo(root)
	if repo == "" {
		return r
	}
	r.inRepo = true
	rel, err := filepath.Rel(repo, root)
	if err != nil {
		return &ignoreRules{}
	}
	if rel != "." {
		r.top = strings.Split(filepath.ToSlash(rel), "/")
	}
	if dir := gitDirOf(gitPath); dir != "" {
		r.patterns = append(r.patterns, readIgnoreFile(filepath.Join(dir, "info", "exclude"), nil)...)
	}
	dir := repo
	for i := 0; i < len(r.top); i++ {
		r.patterns = append(r.patterns, readIgnoreFile(filepath.Join(dir, gitignoreName), r.top[:i])...)
		r.patterns = append(r.patterns, readIgnoreFile(filepath.Join(dir, ignoreName), r.top[:i])...)
		dir = filepath.Join(dir, r.top[i])
	}
	// A root inside an ignored directory is searched as asked, with the
	// ignore files at and below it only.
	for i := 1; i <= len(r.top); i++ {
		if r.ignored(r.top[:i], true) {
			r.patterns = nil
			break
		}
	}
	return r
}

// findRepo returns the nearest directory at or above dir that holds a .git
// entry (a directory, or the file of a worktree or submodule), and that
// entry's path.
func findRepo(dir string) (repo, gitPath string) {
	for {
		p := filepath.Join(dir, ".git")
		if _, err := os.Lstat(p); err == nil {
			return dir, p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}

// gitDirOf resolves a .git entry to the directory that holds info/exclude:
// the .git directory itself, or for a linked worktree ("gitdir: PATH" in a
// .git file) the common directory that PATH/commondir names.
func gitDirOf(gitPath string) string {
	fi, err := os.Stat(gitPath)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		return gitPath
	}
	data, err := os.ReadFile(gitPath)
	if err != nil {
		return ""
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(gitPath), dir)
	}
	if common, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(dir, c)
		}
		return filepath.Clean(c)
	}
	return dir
}

// readIgnoreFile parses an ignore file whose patterns apply under domain (path
// segments under the repository root); a missing or unreadable file has none.
func readIgnoreFile(path string, domain []string) []gitignore.Pattern {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		s := strings.TrimSuffix(sc.Text(), "\r")
		if !strings.HasPrefix(s, "#") && strings.TrimSpace(s) != "" {
			ps = append(ps, gitignore.ParsePattern(s, domain))
		}
	}
	return ps
}

// enter adds the rules of the ignore files among a directory's entries (dir
// is its absolute path, segs its segments under the repository root) and
// returns the length to restore with leave.
func (r *ignoreRules) enter(dir string, segs []string, hasGitignore, hasIgnore bool) int {
	n := len(r.patterns)
	if hasGitignore && r.inRepo {
		r.patterns = append(r.patterns, readIgnoreFile(filepath.Join(dir, gitignoreName), segs)...)
	}
	if hasIgnore {
		r.patterns = append(r.patterns, readIgnoreFile(filepath.Join(dir, ignoreName), segs)...)
	}
	return n
}

func (r *ignoreRules) leave(n int) { r.patterns = r.patterns[:n] }

// ignored reports whether the entry at path (segments under the repository
// root) is ignored: the last pattern that matches decides.
func (r *ignoreRules) ignored(path []string, isDir bool) bool {
	for i := len(r.patterns) - 1; i >= 0; i-- {
		if m := r.patterns[i].Match(path, isDir); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	return false
}
