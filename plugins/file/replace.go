package file

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
}

// NewStrReplaceFile constructs StrReplaceFile from the host's Approval and
// Environment.
func NewStrReplaceFile(a pluginsdk.Approval, env pluginsdk.Environment) (*StrReplaceFile, error) {
	ws, err := newWorkspace(env)
	return &StrReplaceFile{ws: ws, approval: a}, err
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
	old, fi, errMsg := readTextFile(target, p.Path)
	if errMsg != "" {
		if strings.HasSuffix(errMsg, "does not exist.") {
			errMsg += " StrReplaceFile only edits existing files; use WriteFile to create one."
		}
		return pluginsdk.Error(errMsg).WithBrief("Cannot edit file")
	}
	content, replaced, errMsg := applyEdits(old, p.Edit, p.Path)
	if errMsg != "" {
		return pluginsdk.Error(errMsg).WithBrief("Edit failed")
	}
	if content == old {
		return pluginsdk.Error("The edits leave the file unchanged: old and new are the same.").WithBrief("No change")
	}
	diff := pluginsdk.Diff(path, old, content)
	if r := askApproval(ctx, t.approval, t.ws, path, fmt.Sprintf("Edit file `%s`", path), diff); r != nil {
		return *r
	}
	if err := writeAtomic(target, []byte(content), fi.Mode().Perm()); err != nil {
		if msg := pluginsdk.SandboxDenial(target, p.Path, err); msg != "" {
			return pluginsdk.Error(msg).WithBrief("Outside the sandbox")
		}
		return pluginsdk.Error(fmt.Sprintf("Cannot write `%s`: %v", p.Path, err)).WithBrief("Write failed")
	}
	return pluginsdk.Ok("").
		WithMessage(fmt.Sprintf("Applied %s (%s) to `%s`.", plural(len(p.Edit), "edit", "edits"), plural(replaced, "replacement", "replacements"), p.Path)).
		WithBrief("Edited " + filepath.Base(path)).WithDisplay(diff)
}

// applyEdits applies the edits in order; it fails, naming the edit, when one
// does not apply, so that nothing is written unless all of them do.
func applyEdits(content string, edits Edits, shown string) (string, int, string) {
	replaced := 0
	for i, e := range edits {
		which := "The edit"
		if len(edits) > 1 {
			which = fmt.Sprintf("Edit %d of %d", i+1, len(edits))
		}
		if e.Old == "" {
			return "", 0, which + ": old is empty."
		}
		old, repl := e.Old, e.New
		n := strings.Count(content, old)
		if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
			// The file has CRLF line endings and the edit was written with
			// LF: match it with CRLF and keep the file's line endings.
			old, repl = toCRLF(old), toCRLF(repl)
			n = strings.Count(content, old)
		}
		switch {
		case n == 0:
			return "", 0, fmt.Sprintf("%s: old was not found in `%s`. It must match the file exactly, including whitespace and "+
				"indentation; read the file again and copy the text. No edit was applied.", which, shown)
		case n > 1 && !e.ReplaceAll:
			return "", 0, fmt.Sprintf("%s: old was found %d times in `%s`, but it must occur exactly once. Include more "+
				"surrounding lines to make it unique, or set replace_all to true to replace every occurrence. No edit was applied.",
				which, n, shown)
		}
		if e.ReplaceAll {
			content = strings.ReplaceAll(content, old, repl)
			replaced += n
		} else {
			content = strings.Replace(content, old, repl, 1)
			replaced++
		}
	}
	return content, replaced, ""
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
