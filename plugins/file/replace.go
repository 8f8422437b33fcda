package file

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// editSchema is the JSON Schema of one edit.
const editSchema = `{
	"type": "object",
	"properties": {
		"old": {"type": "string", "minLength": 1, "description": "The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true."},
		"new": {"type": "string", "description": "The text to put in its place (may be empty, to delete old)."},
		"replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence of old instead of exactly one."}
	},
	"required": ["old", "new"],
	"additionalProperties": false
}`

// replaceSchema is StrReplaceFile's parameters schema, written by hand
// because edit is one edit or a list of them (oneOf object|array).
const replaceSchema = `{
	"type": "object",
	"properties": {
		"path": {"type": "string", "minLength": 1, "description": "The file to edit: absolute, or relative to the working directory. It must exist."},
		"edit": {
			"description": "One edit, or a list of edits applied in order (each one to the result of the previous ones).",
			"oneOf": [
				` + editSchema + `,
				{"type": "array", "minItems": 1, "items": ` + editSchema + `}
			]
		}
	},
	"required": ["path", "edit"],
	"additionalProperties": false
}`

// Edit is one replacement.
type Edit struct {
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all"`
}

// Edits is one edit or a list of them: it decodes from either form.
type Edits []Edit

// UnmarshalJSON accepts an edit object or an array of them.
func (e *Edits) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var list []Edit
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		*e = list
		return nil
	}
	var one Edit
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*e = Edits{one}
	return nil
}

// ReplaceParams are StrReplaceFile's arguments.
type ReplaceParams struct {
	Path string `json:"path"`
	Edit Edits  `json:"edit"`
}

// StrReplaceFile replaces exact strings in a file, after approval.
type StrReplaceFile struct {
	ws       workspace
	approval pluginsdk.Approval
	// editor, when the host lends the editor's files, gives the text to
	// edit (unsaved changes included) and takes the edited text; nil: the
	// disk.
	editor pluginsdk.Editor
}

// NewStrReplaceFile constructs StrReplaceFile from the host's Approval,
// Environment and Editor (nil when the host lends no editor).
func NewStrReplaceFile(a pluginsdk.Approval, env pluginsdk.Environment, ed pluginsdk.Editor) (*StrReplaceFile, error) {
	ws, err := newWorkspace(env)
	return &StrReplaceFile{ws: ws, approval: a, editor: ed}, err
}

// editorCopy is the editor's text of target in a temporary file, to read
// or edit in place of the disk's.
func editorCopy(ctx context.Context, ed pluginsdk.Editor, target string) (*os.File, fs.FileInfo, error) {
	text, err := ed.ReadTextFile(ctx, target)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.CreateTemp("", "kosong-editor-*")
	if err != nil {
		return nil, nil, err
	}
	_ = os.Remove(f.Name())
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// Call decodes the arguments and applies the edits.
func (t *StrReplaceFile) Call(ctx context.Context, args json.RawMessage) pluginsdk.Result {
	var p ReplaceParams
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, &p); err != nil {
		return pluginsdk.Error(fmt.Sprintf("Error parsing JSON arguments: %v", err)).WithBrief("Invalid arguments")
	}
	if p.Path == "" {
		return pluginsdk.Error("path is empty.").WithBrief("Invalid path")
	}
	if len(p.Edit) == 0 {
		return pluginsdk.Error("No edit given.").WithBrief("Invalid arguments")
	}
	path := t.ws.abs(p.Path)
	target := realPath(path)
	f, fi, errMsg := openTextFile(target, p.Path)
	if errMsg != "" {
		if strings.HasSuffix(errMsg, "does not exist.") {
			errMsg += " StrReplaceFile only edits existing files; use WriteFile to create one."
		}
		return pluginsdk.Error(errMsg).WithBrief("Cannot edit file")
	}
	defer f.Close()
	perm := fi.Mode().Perm()
	if t.editor != nil {
		ef, efi, err := editorCopy(ctx, t.editor, target)
		if err != nil {
			return pluginsdk.Error(fmt.Sprintf("Cannot read `%s` in the editor: %v", p.Path, err)).WithBrief("Cannot edit file")
		}
		defer ef.Close()
		f, fi = ef, efi
	}
	ed, errMsg, err := applyEdits(ctx, f, fi.Size(), target, p.Edit, p.Path)
	if err != nil {
		if msg := pluginsdk.SandboxDenial(target, p.Path, err); msg != "" {
			return pluginsdk.Error(msg).WithBrief("Outside the sandbox")
		}
		return pluginsdk.Error(fmt.Sprintf("Cannot edit `%s`: %v", p.Path, err)).WithBrief("Edit failed")
	}
	if errMsg != "" {
		return pluginsdk.Error(errMsg).WithBrief("Edit failed")
	}
	defer ed.discard()
	if same, err := unchanged(f, ed.tmp, fi.Size(), ed.size, ed.changes, ed.more); err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot edit `%s`: %v", p.Path, err)).WithBrief("Edit failed")
	} else if same {
		return pluginsdk.Error("The edits leave the file unchanged: old and new are the same.").WithBrief("No change")
	}
	diff, err := pluginsdk.DiffChanges(path, pluginsdk.DiffSide{R: f, Size: fi.Size()}, pluginsdk.DiffSide{R: ed.tmp, Size: ed.size}, ed.changes, ed.more)
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot edit `%s`: %v", p.Path, err)).WithBrief("Edit failed")
	}
	if r := askApproval(ctx, t.approval, t.ws, path, describeEdit("Edit file", path, diff), diff.Blocks...); r != nil {
		return *r
	}
	if t.editor != nil {
		text, err := io.ReadAll(io.NewSectionReader(ed.tmp, 0, ed.size))
		if err == nil {
			err = t.editor.WriteTextFile(ctx, target, string(text))
		}
		if err != nil {
			return pluginsdk.Error(fmt.Sprintf("Cannot write `%s` in the editor: %v", p.Path, err)).WithBrief("Write failed")
		}
	} else if err := ed.commit(target, perm); err != nil {
		if msg := pluginsdk.SandboxDenial(target, p.Path, err); msg != "" {
			return pluginsdk.Error(msg).WithBrief("Outside the sandbox")
		}
		return pluginsdk.Error(fmt.Sprintf("Cannot write `%s`: %v", p.Path, err)).WithBrief("Write failed")
	}
	return pluginsdk.Ok("").
		WithMessage(fmt.Sprintf("Applied %s (%s) to `%s`.", plural(len(p.Edit), "edit", "edits"), plural(ed.replaced, "replacement", "replacements"), p.Path)).
		WithBrief("Edited " + filepath.Base(path)).WithDisplay(diff.Blocks...)
}

// describeEdit is an approval's description, saying when the diff does not
// show the whole edit.
func describeEdit(verb, path string, d pluginsdk.BoundedDiff) string {
	s := fmt.Sprintf("%s `%s`", verb, path)
	if d.Partial {
		s += " (the diff shows only part of this edit)"
	}
	return s
}

// edited is the result of applying edits: the new content in a temporary
// file beside the target, and the places that changed.
type edited struct {
	tmp      *os.File
	size     int64
	replaced int
	changes  []pluginsdk.DiffChange
	more     bool
}

// discard removes the temporary file unless commit renamed it.
func (e *edited) discard() {
	if e.tmp != nil {
		_ = e.tmp.Close()
		_ = os.Remove(e.tmp.Name())
		e.tmp = nil
	}
}

// commit gives the new content perm and renames it over target.
func (e *edited) commit(target string, perm fs.FileMode) error {
	if err := e.tmp.Chmod(perm); err != nil {
		return err
	}
	if err := e.tmp.Sync(); err != nil {
		return err
	}
	if err := os.Rename(e.tmp.Name(), target); err != nil {
		return err
	}
	_ = e.tmp.Close()
	e.tmp = nil
	return nil
}

// applyEdits applies the edits in order, each in one pass that counts the
// occurrences and one that writes the result to a temporary file beside
// target; it fails, naming the edit, when one does not apply, so that
// nothing is written unless all of them do. errMsg is for the model; err is
// a failure to read or write.
func applyEdits(ctx context.Context, src *os.File, size int64, target string, edits Edits, shown string) (ed *edited, errMsg string, err error) {
	work := &edited{}
	var cur io.ReadSeeker = src
	defer func() {
		if errMsg != "" || err != nil {
			work.discard()
		}
	}()
	for i, e := range edits {
		which := "The edit"
		if len(edits) > 1 {
			which = fmt.Sprintf("Edit %d of %d", i+1, len(edits))
		}
		if e.Old == "" {
			return nil, which + ": old is empty.", nil
		}
		old, repl := []byte(e.Old), []byte(e.New)
		n, crlf, err := countIn(ctx, cur, old)
		if err != nil {
			return nil, "", err
		}
		if n == 0 && crlf && strings.Contains(e.Old, "\n") && !strings.Contains(e.Old, "\r\n") {
			// The file has CRLF line endings and the edit was written with
			// LF: match it with CRLF and keep the file's line endings.
			old, repl = []byte(toCRLF(e.Old)), []byte(toCRLF(e.New))
			if n, _, err = countIn(ctx, cur, old); err != nil {
				return nil, "", err
			}
		}
		switch {
		case n == 0:
			return nil, fmt.Sprintf("%s: old was not found in `%s`. It must match the file exactly, including whitespace and "+
				"indentation; read the file again and copy the text. No edit was appliwork.", which, shown), nil
		case n > 1 && !e.ReplaceAll:
			return nil, fmt.Sprintf("%s: old was found %d times in `%s`, but it must occur exactly once. Include more "+
				"surrounding lines to make it unique, or set replace_all to true to replace every occurrence. No edit was appliwork.",
				which, n, shown), nil
		}
		next, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
		if err != nil {
			return nil, "", err
		}
		c := newComposer(work.changes, work.more, len(old), len(repl))
		bw := newBufferedWriter(next)
		_, _, err = replaceStream(ctx, cur, bw, old, repl, c.match)
		if err == nil {
			err = bw.Flush()
		}
		work.discard()
		work.tmp = next
		if err != nil {
			return nil, "", err
		}
		if work.size, err = next.Seek(0, io.SeekCurrent); err != nil {
			return nil, "", err
		}
		work.changes, work.more = c.finish()
		work.replaced += n
		cur = io.NewSectionReader(next, 0, work.size)
	}
	return work, "", nil
}

// countIn counts the occurrences of old in r from its start (and says
// whether r has a "\r\n"), leaving r at its start.
func countIn(ctx context.Context, r io.ReadSeeker, old []byte) (int, bool, error) {
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return 0, false, err
	}
	n, crlf, err := replaceStream(ctx, r, nil, old, nil, nil)
	if err != nil {
		return 0, false, err
	}
	_, err = r.Seek(0, io.SeekStart)
	return n, crlf, err
}

func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// plural renders a count with its noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
