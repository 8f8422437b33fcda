package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// AgentsMDFiles are the project instruction files read in every folder
// from the repository root down to the work dir, in this order.
var AgentsMDFiles = []string{"AGENTS.md", filepath.Join(".kosong", "AGENTS.md")}

// AgentsMDSource is one instruction file found by FindAgentsMD.
type AgentsMDSource struct {
	Path string
	// Text is the file's text, cut to what the budget left.
	Text string
	// Cut says the file was longer than the budget left it.
	Cut bool
}

// FindAgentsMD finds the instruction files of workDir, most general first:
// the user's ($XDG_CONFIG_HOME/kosong-host/AGENTS.md, else
// ~/.config/kosong-host/AGENTS.md), then AgentsMDFiles in each folder from
// the repository root (the nearest folder holding .git; the work dir
// alone outside a repository) down to workDir. Together they are read up
// to budget bytes: the work dir's files first, then their parents', the
// user's last, so the most specific instructions are the last to be cut.
func FindAgentsMD(workDir string, getenv func(string) string, budget int) ([]AgentsMDSource, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var paths []string // most specific first
	for _, dir := range projectDirs(workDir) {
		for i := len(AgentsMDFiles) - 1; i >= 0; i-- {
			paths = append(paths, filepath.Join(dir, AgentsMDFiles[i]))
		}
	}
	if p := userAgentsMD(getenv); p != "" {
		paths = append(paths, p)
	}
	var found []AgentsMDSource
	left := budget
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return nil, fmt.Errorf("system prompt: %w", err)
			}
			continue
		}
		// A file far over the budget is read only up to it (and a byte
		// more, to know it was cut).
		data, err := readCapped(p, int64(max(left, 0))+1)
		if err != nil {
			return nil, fmt.Errorf("system prompt: %w", err)
		}
		text := strings.TrimSpace(data)
		if text == "" {
			continue
		}
		src := AgentsMDSource{Path: p, Text: text}
		if len(text) > left {
			src.Text, src.Cut = cutUTF8(text, left), true
		}
		left -= len(src.Text)
		found = append(found, src)
	}
	// Most general first, as they are read.
	for i, j := 0, len(found)-1; i < j; i, j = i+1, j-1 {
		found[i], found[j] = found[j], found[i]
	}
	return found, nil
}

// agentsMD is KOSONG_AGENTS_MD: the files of FindAgentsMD, each under a
// line naming it; a file cut by the budget says so.
func agentsMD(workDir string, getenv func(string) string) (string, error) {
	found, err := FindAgentsMD(workDir, getenv, MaxAgentsMD)
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(found))
	for _, f := range found {
		text := f.Text
		if f.Cut {
			text += fmt.Sprintf("\n[... cut: the AGENTS.md files together are read up to %d KiB]", MaxAgentsMD>>10)
		}
		parts = append(parts, fmt.Sprintf("<!-- %s -->\n%s", f.Path, text))
	}
	return strings.Join(parts, "\n\n"), nil
}

// projectDirs are workDir and its parents up to the repository root,
// workDir first; workDir alone when no parent holds .git.
func projectDirs(workDir string) []string {
	dirs := []string{workDir}
	for d := workDir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return dirs
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dirs[:1]
		}
		d = parent
		dirs = append(dirs, d)
	}
}

// userAgentsMD is the user's own AGENTS.md, "" without a config folder.
func userAgentsMD(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "kosong-host", "AGENTS.md")
	}
	if h := getenv("HOME"); h != "" && filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "kosong-host", "AGENTS.md")
	}
	return ""
}

// cutUTF8 is s cut to at most n bytes, on a rune boundary.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
