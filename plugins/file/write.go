package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// newFilePerm is the permission of a file WriteFile creates.
const newFilePerm fs.FileMode = 0o644

// WriteParams are WriteFile's arguments.
type WriteParams struct {
	Path    string `json:"path" minLength:"1" jsonschema:"The file to write: absolute, or relative to the working directory. Its directory must already exist."`
	Content string `json:"content" jsonschema:"The text to write."`
	Mode    string `json:"mode,omitempty" default:"overwrite" enum:"overwrite,append" jsonschema:"overwrite (the default) replaces the whole file, or creates it; append adds content at the end of the file, creating it if needed."`
}

// WriteFile creates, overwrites or appends to a file, after approval.
type WriteFile struct {
	ws       workspace
	approval pluginsdk.Approval
	// editor, when the host lends the editor's files, takes the write
	// (the user can undo it there); nil: the disk.
	editor pluginsdk.Editor
}

// NewWriteFile constructs WriteFile from the host's Approval, Environment
// and Editor (nil when the host lends no editor).
func NewWriteFile(a pluginsdk.Approval, env pluginsdk.Environment, ed pluginsdk.Editor) (*WriteFile, error) {
	ws, err := newWorkspace(env)
	return &WriteFile{ws: ws, approval: a, editor: ed}, err
}

// Call writes the file.
func (t *WriteFile) Call(ctx context.Context, p WriteParams) pluginsdk.Result {
	if p.Path == "" {
		return pluginsdk.Error("path is empty.").WithBrief("Invalid path")
	}
	appending := false
	switch p.Mode {
	case "", "overwrite":
	case "append":
		appending = true
	default:
		return pluginsdk.Error(fmt.Sprintf("Unknown mode %q: use overwrite or append.", p.Mode)).WithBrief("Invalid mode")
	}
	path := t.ws.abs(p.Path)
	// Write where a symlink points, not over the link.
	target := realPath(path)
	perm := newFilePerm
	// The old content, read in windows for the diff: empty for a new or
	// binary file.
	var oldSide pluginsdk.DiffSide = pluginsdk.DiffSide{R: strings.NewReader("")}
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.IsDir():
		return pluginsdk.Error(fmt.Sprintf("`%s` is a directory, not a file.", p.Path)).WithBrief("Is a directory")
	case err == nil && !fi.Mode().IsRegular():
		return pluginsdk.Error(fmt.Sprintf("`%s` is not a regular file.", p.Path)).WithBrief("Not a regular file")
	case err == nil:
		perm = fi.Mode().Perm()
		f, err := os.Open(target)
		if err != nil {
			return pluginsdk.Error(describeStatError(p.Path, err)).WithBrief("Cannot write file")
		}
		defer f.Close()
		binary, err := sniff(f)
		if err != nil {
			return pluginsdk.Error(fmt.Sprintf("Cannot read `%s`: %v", p.Path, err)).WithBrief("Cannot write file")
		}
		if !binary {
			oldSide = pluginsdk.DiffSide{R: f, Size: fi.Size()}
		}
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(target)
		if di, err := os.Stat(dir); err != nil || !di.IsDir() {
			return pluginsdk.Error(fmt.Sprintf("The directory of `%s` does not exist. WriteFile does not create directories: "+
				"create it first (e.g. `mkdir -p` with the Shell tool).", p.Path)).WithBrief("Directory not found")
		}
	default:
		return pluginsdk.Error(describeStatError(p.Path, err)).WithBrief("Cannot write file")
	}

	verb := "Write"
	content := strings.NewReader(p.Content)
	size := int64(len(p.Content))
	var newSide pluginsdk.DiffSide
	var changes []pluginsdk.DiffChange
	if appending {
		verb = "Append to"
		newSide = pluginsdk.DiffSide{R: concatReaderAt{oldSide, content}, Size: oldSide.Size + size}
		changes = []pluginsdk.DiffChange{{OldOff: oldSide.Size, OldEnd: oldSide.Size, NewOff: oldSide.Size, NewEnd: newSide.Size}}
	} else {
		newSide = pluginsdk.DiffSide{R: content, Size: size}
		pre, suf, err := commonEnds(oldSide, p.Content)
		if err != nil {
			return pluginsdk.Error(fmt.Sprintf("Cannot read `%s`: %v", p.Path, err)).WithBrief("Cannot write file")
		}
		if pre+suf < max(oldSide.Size, size) {
			changes = []pluginsdk.DiffChange{{OldOff: pre, OldEnd: oldSide.Size - suf, NewOff: pre, NewEnd: size - suf}}
		}
	}
	diff, err := pluginsdk.DiffChanges(path, oldSide, newSide, changes, false)
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot read `%s`: %v", p.Path, err)).WithBrief("Cannot write file")
	}
	if r := askApproval(ctx, t.approval, t.ws, path, describeEdit(verb+" file", path, diff), diff.Blocks...); r != nil {
		return *r
	}

	switch {
	case t.editor != nil:
		err = t.writeInEditor(ctx, target, p.Content, appending)
	case appending:
		err = appendFile(target, p.Content)
	default:
		err = writeAtomic(target, []byte(p.Content), perm)
	}
	if msg := pluginsdk.SandboxDenial(target, p.Path, err); msg != "" {
		return pluginsdk.Error(msg).WithBrief("Outside the sandbox")
	}
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot write `%s`: %v", p.Path, err)).WithBrief("Write failed")
	}
	if st, err := os.Stat(target); err == nil {
		size = st.Size()
	}
	msg := fmt.Sprintf("Wrote %d bytes to `%s`.", len(p.Content), p.Path)
	if appending {
		msg = fmt.Sprintf("Appended %d bytes to `%s`; it now has %d bytes.", len(p.Content), p.Path, size)
	}
	return pluginsdk.Ok("").WithMessage(msg).WithBrief(verb + " " + filepath.Base(path)).WithDisplay(diff.Blocks...)
}

// writeInEditor writes through the editor: the whole new text, the
// editor's own (unsaved changes included) with content added when
// appending.
func (t *WriteFile) writeInEditor(ctx context.Context, path, content string, appending bool) error {
	if appending {
		old, err := t.editor.ReadTextFile(ctx, path)
		if err == nil {
			content = old + content
		} else if _, serr := os.Stat(path); serr == nil {
			return err
		}
	}
	return t.editor.WriteTextFile(ctx, path, content)
}

func appendFile(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, newFilePerm)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// concatReaderAt reads a followed by b.
type concatReaderAt struct {
	a pluginsdk.DiffSide
	b io.ReaderAt
}

func (c concatReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < c.a.Size {
		k, err := c.a.R.ReadAt(p[:min(int64(len(p)), c.a.Size-off)], off)
		n += k
		if err != nil && !errors.Is(err, io.EOF) {
			return n, err
		}
		if k < len(p) && off+int64(k) < c.a.Size {
			return n, io.ErrUnexpectedEOF
		}
	}
	if n == len(p) {
		return n, nil
	}
	k, err := c.b.ReadAt(p[n:], off+int64(n)-c.a.Size)
	return n + k, err
}

// commonEnds returns the lengths of the longest common start and end of
// old and content that do not overlap, reading old in windows.
func commonEnds(old pluginsdk.DiffSide, content string) (pre, suf int64, err error) {
	const window = 64 << 10
	buf := make([]byte, window)
	limit := min(old.Size, int64(len(content)))
	for pre < limit {
		k := min(window, limit-pre)
		if _, err := old.R.ReadAt(buf[:k], pre); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		i := 0
		for i < int(k) && buf[i] == content[pre+int64(i)] {
			i++
		}
		pre += int64(i)
		if i < int(k) {
			break
		}
	}
	limit -= pre
	for suf < limit {
		k := min(window, limit-suf)
		if _, err := old.R.ReadAt(buf[:k], old.Size-suf-k); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		i := 0
		for i < int(k) && buf[int(k)-1-i] == content[int64(len(content))-suf-1-int64(i)] {
			i++
		}
		suf += int64(i)
		if i < int(k) {
			break
		}
	}
	return pre, suf, nil
}
