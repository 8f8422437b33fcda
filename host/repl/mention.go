package repl

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/kosong-host/kosong-host/providers"
)

// A prompt's @PATH mentions attach files: a text file's contents, a
// folder's listing (what .gitignore ignores left out), an image as an
// image for a model that takes images. Paths are relative to the work dir
// (absolute and ~/ paths work too). A mention of nothing that exists is
// sent as typed. The prompt stays the message's first part; each
// attachment follows as its own part.

// Bounds of what a prompt attaches.
const (
	// MaxMentionText bounds the text attached from one file; a longer
	// file is cut there, saying so.
	MaxMentionText = 100 << 10
	// MaxMentionTotal bounds the text attached to one prompt; files past
	// it are not attached.
	MaxMentionTotal = 400 << 10
	// MaxMentionImage bounds an attached image.
	MaxMentionImage = 5 << 20
	// MaxMentionEntries bounds a folder's listing.
	MaxMentionEntries = 200
)

// mentionRE finds @PATH at the start or after a blank.
var mentionRE = regexp.MustCompile(`(^|\s)@([^\s@]+)`)

// attachment is one mention's parts and the line that reports it.
type attachment struct {
	parts  []providers.ContentPart
	report string
}

// attach turns the prompt into the user message's parts: the prompt, then
// what its mentions attach; notes are what the user is told.
func attach(workDir, prompt string, images bool) (parts []providers.ContentPart, notes []string) {
	parts = []providers.ContentPart{providers.TextPart(prompt)}
	seen := map[string]bool{}
	total := 0
	for _, m := range mentionRE.FindAllStringSubmatch(prompt, -1) {
		word := m[2]
		path, display, ok := resolveMention(workDir, word)
		if !ok {
			if strings.ContainsAny(word, "/.") {
				notes = append(notes, fmt.Sprintf("@%s: no such file; sent as typed", word))
			}
			continue
		}
		if seen[path] {
			continue
		}
		seen[path] = true
		a, size, err := attachPath(workDir, path, display, images, MaxMentionTotal-total)
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s: %v; not attached", display, err))
			continue
		}
		total += size
		parts = append(parts, a.parts...)
		notes = append(notes, a.report)
	}
	return parts, notes
}

// resolveMention finds the file a mention names: as written, else without
// the punctuation that ends a sentence.
func resolveMention(workDir, word string) (path, display string, ok bool) {
	for w := word; w != ""; w = w[:len(w)-1] {
		p := w
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, rest)
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(workDir, p)
		}
		if _, err := os.Stat(p); err == nil {
			return p, w, true
		}
		if !strings.ContainsRune(".,;:!?)]}'\"", rune(w[len(w)-1])) {
			break
		}
	}
	return "", "", false
}

// attachPath is the attachment of path, using at most budget bytes of
// text; size is the text it used.
func attachPath(workDir, path, display string, images bool, budget int) (attachment, int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return attachment{}, 0, err
	}
	if fi.IsDir() {
		listing, n := listFolder(workDir, path)
		text := fmt.Sprintf("<directory path=%q>\n%s\n</directory>", display, listing)
		if len(text) > budget {
			return attachment{}, 0, fmt.Errorf("over the %d KiB the attachments of one prompt may take", MaxMentionTotal>>10)
		}
		return attachment{parts: []providers.ContentPart{providers.TextPart(text)},
			report: fmt.Sprintf("attached @%s (a listing of %d entries)", display, n)}, len(text), nil
	}
	if !fi.Mode().IsRegular() {
		return attachment{}, 0, fmt.Errorf("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return attachment{}, 0, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if media := http.DetectContentType(head); providers.IsImageType(media) {
		return attachImage(f, head, fi.Size(), media, display, images)
	}
	limit := min(MaxMentionText, budget)
	if limit <= 0 {
		return attachment{}, 0, fmt.Errorf("over the %d KiB the attachments of one prompt may take", MaxMentionTotal>>10)
	}
	rest, err := io.ReadAll(io.LimitReader(f, int64(limit-len(head))+1))
	if err != nil {
		return attachment{}, 0, err
	}
	data := append(head, rest...)
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(trimPartialRune(data)) {
		return attachment{}, 0, fmt.Errorf("a binary file (%s)", sizeText(fi.Size()))
	}
	note := ""
	if len(data) > limit {
		data = trimPartialRune(data[:limit])
		note = fmt.Sprintf("\n[cut at %d KiB of %s; read the rest with ReadFile]", len(data)>>10, sizeText(fi.Size()))
	}
	text := fmt.Sprintf("<file path=%q>\n%s%s\n</file>", display, data, note)
	report := fmt.Sprintf("attached @%s (%s)", display, sizeText(fi.Size()))
	if note != "" {
		report += fmt.Sprintf(", cut at %d KiB", len(data)>>10)
	}
	return attachment{parts: []providers.ContentPart{providers.TextPart(text)}, report: report}, len(text), nil
}

// attachImage attaches an image file as an image part.
func attachImage(f io.Reader, head []byte, size int64, media, display string, images bool) (attachment, int, error) {
	if !images {
		return attachment{}, 0, fmt.Errorf("an image, and the model does not take images")
	}
	if size > MaxMentionImage {
		return attachment{}, 0, fmt.Errorf("an image of %s, over %d MiB", sizeText(size), MaxMentionImage>>20)
	}
	rest, err := io.ReadAll(io.LimitReader(f, MaxMentionImage))
	if err != nil {
		return attachment{}, 0, err
	}
	data := append(head, rest...)
	return attachment{parts: []providers.ContentPart{providers.TextPart(fmt.Sprintf("<image path=%q>", display)),
		{Type: providers.PartImage, ImageURL: providers.DataURL(media, data)}, providers.TextPart("</image>")},
		report: fmt.Sprintf("attached @%s (an image, %s)", display, sizeText(size))}, 0, nil
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

func sizeText(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}

// listFolder lists dir's entries, sorted, folders with a trailing "/",
// leaving out .git and what .gitignore ignores; at most MaxMentionEntries.
func listFolder(workDir, dir string) (string, int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "(cannot be read: " + err.Error() + ")", 0
	}
	ig := newIgnorer(workDir)
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if e.Name() == ".git" || ig.ignored(filepath.Join(dir, e.Name()), e.IsDir()) {
			continue
		}
		if n == MaxMentionEntries {
			b.WriteString("... and more\n")
			break
		}
		n++
		b.WriteString(e.Name())
		if e.IsDir() {
			b.WriteString("/")
		}
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n"), n
}

// ignorer says what the .gitignore files of the repository around a work
// dir ignore (go-git's matching: the files of every folder from the
// repository root down, and .git/info/exclude).
type ignorer struct {
	repo  string
	cache map[string][]gitignore.Pattern // a folder's own patterns
}

func newIgnorer(workDir string) *ignorer {
	ig := &ignorer{cache: map[string][]gitignore.Pattern{}}
	for d := workDir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			ig.repo = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return ig
}

// ignored says whether path (absolute) is ignored.
func (ig *ignorer) ignored(path string, isDir bool) bool {
	if ig.repo == "" {
		return false
	}
	rel, err := filepath.Rel(ig.repo, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	segs := strings.Split(filepath.ToSlash(rel), "/")
	patterns := ig.patterns(filepath.Join(ig.repo, ".git", "info", "exclude"), nil)
	dir := ig.repo
	for i := 0; i < len(segs); i++ {
		patterns = append(patterns, ig.patterns(filepath.Join(dir, ".gitignore"), segs[:i])...)
		dir = filepath.Join(dir, segs[i])
	}
	return gitignore.NewMatcher(patterns).Match(segs, isDir)
}

// patterns reads an ignore file whose patterns apply under domain.
func (ig *ignorer) patterns(file string, domain []string) []gitignore.Pattern {
	if p, ok := ig.cache[file]; ok {
		return p
	}
	var out []gitignore.Pattern
	if f, err := os.Open(file); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			out = append(out, gitignore.ParsePattern(line, slices.Clone(domain)))
		}
		f.Close()
	}
	ig.cache[file] = out
	return out
}

// MaxCompletions bounds the paths Tab offers.
const MaxCompletions = 200

// completePath lists the paths under workDir that complete word ("@" and
// a path prefix), each as "@PATH", folders ending with "/"; what
// .gitignore ignores and hidden files (unless the prefix starts with a
// dot) are left out.
func completePath(workDir, word string) []string {
	prefix := strings.TrimPrefix(word, "@")
	dirPart, base := "", prefix
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dirPart, base = prefix[:i+1], prefix[i+1:]
	}
	dir := dirPart
	if rest, ok := strings.CutPrefix(dir, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(workDir, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	ig := newIgnorer(workDir)
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || name == ".git" || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
				isDir = fi.IsDir()
			}
		}
		if ig.ignored(filepath.Join(dir, name), isDir) {
			continue
		}
		c := "@" + dirPart + name
		if isDir {
			c += "/"
		}
		out = append(out, c)
		if len(out) == MaxCompletions {
			break
		}
	}
	return out
}
