package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
}

// NewWriteFile constructs WriteFile from the host's Approval and Environment.
func NewWriteFile(a pluginsdk.Approval, env pluginsdk.Environment) (*WriteFile, error) {
	ws, err := newWorkspace(env)
	return &WriteFile{ws: ws, approval: a}, err
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
	old := ""
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.IsDir():
		return pluginsdk.Error(fmt.Sprintf("`%s` is a directory, not a file.", p.Path)).WithBrief("Is a directory")
	case err == nil && !fi.Mode().IsRegular():
		return pluginsdk.Error(fmt.Sprintf("`%s` is not a regular file.", p.Path)).WithBrief("Not a regular file")
	case err == nil:
		perm = fi.Mode().Perm()
		data, err := os.ReadFile(target)
		if err != nil {
			return pluginsdk.Error(describeStatError(p.Path, err)).WithBrief("Cannot write file")
		}
		if !looksBinary(data[:min(len(data), sniffLen)], len(data) <= sniffLen) {
			old = string(data)
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

	newText, verb := p.Content, "Write"
	if appending {
		newText, verb = old+p.Content, "Append to"
	}
	diff := pluginsdk.Diff(path, old, newText)
	if r := askApproval(ctx, t.approval, t.ws, path, fmt.Sprintf("%s file `%s`", verb, path), diff); r != nil {
		return *r
	}

	if appending {
		err = appendFile(target, p.Content)
	} else {
		err = writeAtomic(target, []byte(p.Content), perm)
	}
	if msg := pluginsdk.SandboxDenial(target, p.Path, err); msg != "" {
		return pluginsdk.Error(msg).WithBrief("Outside the sandbox")
	}
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot write `%s`: %v", p.Path, err)).WithBrief("Write failed")
	}
	size := int64(len(p.Content))
	if st, err := os.Stat(target); err == nil {
		size = st.Size()
	}
	msg := fmt.Sprintf("Wrote %d bytes to `%s`.", len(p.Content), p.Path)
	if appending {
		msg = fmt.Sprintf("Appended %d bytes to `%s`; it now has %d bytes.", len(p.Content), p.Path, size)
	}
	return pluginsdk.Ok("").WithMessage(msg).WithBrief(verb + " " + filepath.Base(path)).WithDisplay(diff)
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
