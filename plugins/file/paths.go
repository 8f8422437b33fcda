package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// The approval actions of the editing tools: the user may approve each
// class for the whole session.
const (
	actionEdit        = "edit file"
	actionEditOutside = "edit file outside of working directory"
)

// workspace resolves paths against the host's working directory.
type workspace struct{ dir string }

func newWorkspace(env pluginsdk.Environment) (workspace, error) {
	dir := env.WorkDir()
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return workspace{}, fmt.Errorf("no working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return workspace{}, err
	}
	return workspace{dir: abs}, nil
}

// abs makes p absolute, resolving a relative path against the work dir.
func (w workspace) abs(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.dir, p)
	}
	return filepath.Clean(p)
}

// outside reports whether writing to the absolute path would touch a file
// outside the work dir, symlinks resolved (a link in the work dir that
// points out counts as outside).
func (w workspace) outside(path string) bool {
	rel, err := filepath.Rel(realPath(w.dir), realPath(path))
	return err != nil || !filepath.IsLocal(rel)
}

// display returns how to show a path found under root to the model: joined
// to the root as the model gave it (given), or relative to the work dir when
// the model gave none. Either way it can be passed back to another tool.
func display(given, root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	if given == "" {
		return rel
	}
	return filepath.Join(given, rel)
}

// realPath returns the file that path names once every symlink is resolved,
// including a final link whose target does not exist yet (a write through it
// would create the target) and missing parent directories.
func realPath(path string) string {
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(path)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = filepath.Clean(target)
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	if dir == path {
		return path
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(r, base)
	}
	return filepath.Join(realPath(dir), base)
}

// sniffLen is how much of a file the binary check looks at.
const sniffLen = 8 << 10

// looksBinary reports whether sample, the start of a file, is binary rather
// than text: it has a NUL byte, or more than a tenth of its characters are
// invalid UTF-8 or control characters other than whitespace and escape.
// atEOF says the sample is the whole file (so a cut rune at its end is not
// an artefact of sampling).
func looksBinary(sample []byte, atEOF bool) bool {
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	bad, n := 0, 0
	for i := 0; i < len(sample); {
		r, size := utf8.DecodeRune(sample[i:])
		if r == utf8.RuneError && size == 1 {
			if !atEOF && !utf8.FullRune(sample[i:]) {
				break // a rune cut by the sample's end
			}
			bad++
		} else if r < 0x20 && r != '\n' && r != '\r' && r != '\t' && r != '\f' && r != '\v' && r != 0x1b {
			bad++
		}
		n++
		i += size
	}
	return bad*10 > n
}

// sniff reads the start of f for looksBinary and rewinds it.
func sniff(f *os.File) (binary bool, err error) {
	buf := make([]byte, sniffLen)
	n, err := io.ReadFull(f, buf)
	atEOF := errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
	if err != nil && !atEOF {
		return false, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	return looksBinary(buf[:n], atEOF), nil
}

// describeStatError turns a stat or open error into a message for the model.
func describeStatError(shown string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("`%s` does not exist.", shown)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("Permission denied: `%s`.", shown)
	}
	return fmt.Sprintf("Cannot access `%s`: %v", shown, err)
}

// openTextFile opens an existing regular text file for editing.
func openTextFile(path, shown string) (*os.File, fs.FileInfo, string) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, describeStatError(shown, err)
	}
	if fi.IsDir() {
		return nil, nil, fmt.Sprintf("`%s` is a directory, not a file.", shown)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Sprintf("`%s` is not a regular file.", shown)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, describeStatError(shown, err)
	}
	binary, err := sniff(f)
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Sprintf("Cannot read `%s`: %v", shown, err)
	}
	if binary {
		_ = f.Close()
		return nil, nil, fmt.Sprintf("`%s` looks like a binary file; only text files can be edited.", shown)
	}
	return f, fi, ""
}

// writeAtomic replaces path's content with data: it writes a temporary file
// in the same directory and renames it over path, so readers see either the
// old or the new content, never a mix. The file keeps perm.
func writeAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// askApproval asks the user to approve an edit of path, with the stronger
// action when the file lies outside the work dir. It returns a non-nil
// result when the edit must not go ahead.
func askApproval(ctx context.Context, approval pluginsdk.Approval, ws workspace, path, description string, diff ...pluginsdk.DisplayBlock) *pluginsdk.Result {
	action := actionEdit
	if ws.outside(path) {
		action = actionEditOutside
	}
	d, err := approval.Request(ctx, action, description, diff...)
	if err != nil {
		r := pluginsdk.Error(fmt.Sprintf("Could not ask the user to approve the edit: %v", err)).WithBrief("Approval failed")
		return &r
	}
	if !d.Approved {
		r := pluginsdk.Rejected(d.Feedback)
		return &r
	}
	return nil
}
