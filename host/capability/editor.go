package capability

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

// Editor is the user's editor's files, lent by the front end's client (an
// ACP client's fs/read_text_file and fs/write_text_file).
type Editor interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

var _ pluginrpc.EditorServer = (*Host)(nil)

// Bounds are the folders a sandboxed plugin's own file access is held to
// (its sandbox's read and write paths); its Editor requests are held to
// them too, since the editor works outside the sandbox.
type Bounds struct {
	Read, Write []string
}

// allows says whether b lets path be read (or written): beneath a Write
// folder, or for a read a Read one, after symbolic links are resolved (of
// the path, or of its folder when it does not exist yet).
func (b *Bounds) allows(path string, write bool) bool {
	if b == nil {
		return true
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		dir, derr := filepath.EvalSymlinks(filepath.Dir(path))
		if derr != nil {
			return false
		}
		real = filepath.Join(dir, filepath.Base(path))
	}
	dirs := b.Write
	if !write {
		dirs = append(slices.Clone(b.Read), b.Write...)
	}
	for _, d := range dirs {
		if rd, err := filepath.EvalSymlinks(d); err == nil {
			d = rd
		}
		if rel, err := filepath.Rel(d, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// editor checks a request of the Editor capability: served here, for a
// call in progress of this plugin whose tool declared Editor, with an
// absolute path within the plugin's sandbox (EditorBounds).
func (h *Host) editor(what, toolCallID, path string, write bool) error {
	if h.Editor == nil {
		return status.Error(codes.Unimplemented, "the host offers no Editor: its client lends no editor files")
	}
	tool, err := h.callTool(what, toolCallID)
	if err != nil {
		return err
	}
	if err := h.declared(pluginrpc.CapEditor, tool); err != nil {
		return err
	}
	if !filepath.IsAbs(path) {
		return status.Errorf(codes.InvalidArgument, "%s: path %q of tool %s is not absolute", what, path, tool)
	}
	if !h.EditorBounds.allows(path, write) {
		return status.Errorf(codes.PermissionDenied, "%s: %s is outside the sandbox of plugin %s", what, path, h.Plugin)
	}
	return nil
}

// ReadTextFile reads path as the editor has it, for a call in progress.
func (h *Host) ReadTextFile(ctx context.Context, toolCallID, path string) (string, error) {
	if err := h.editor("editor read", toolCallID, path, false); err != nil {
		return "", err
	}
	content, err := h.Editor.ReadTextFile(ctx, path)
	if err != nil {
		return "", status.Errorf(codes.Unavailable, "the editor did not read %s: %v", path, err)
	}
	return content, nil
}

// WriteTextFile writes path through the editor, for a call in progress.
func (h *Host) WriteTextFile(ctx context.Context, toolCallID, path, content string) error {
	if err := h.editor("editor write", toolCallID, path, true); err != nil {
		return err
	}
	if err := h.Editor.WriteTextFile(ctx, path, content); err != nil {
		return status.Errorf(codes.Unavailable, "the editor did not write %s: %v", path, err)
	}
	return nil
}

// Terminal is the user's editor's terminal, lent by the front end's client
// (an ACP client's terminal/*): Run runs a command there and ends it when
// ctx ends.
type Terminal interface {
	Run(ctx context.Context, req pluginrpc.TerminalRun) (pluginrpc.TerminalResult, error)
}

var _ pluginrpc.TerminalServer = (*Host)(nil)

// RunInTerminal runs a command of a call in progress in the editor's
// terminal.
func (h *Host) RunInTerminal(ctx context.Context, req pluginrpc.TerminalRun) (pluginrpc.TerminalResult, error) {
	if h.Terminal == nil {
		return pluginrpc.TerminalResult{}, status.Error(codes.Unimplemented, "the host offers no Terminal: its client lends no terminal")
	}
	tool, err := h.callTool("terminal command", req.ToolCallID)
	if err != nil {
		return pluginrpc.TerminalResult{}, err
	}
	if err := h.declared(pluginrpc.CapTerminal, tool); err != nil {
		return pluginrpc.TerminalResult{}, err
	}
	if req.Command == "" || !filepath.IsAbs(req.Cwd) {
		return pluginrpc.TerminalResult{}, status.Errorf(codes.InvalidArgument,
			"terminal command of tool %s needs a command and an absolute cwd (got %q in %q)", tool, req.Command, req.Cwd)
	}
	r, err := h.Terminal.Run(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return r, status.FromContextError(ctx.Err()).Err()
		}
		return r, status.Errorf(codes.Unavailable, "the editor's terminal did not run %s: %v", req.Command, err)
	}
	return r, nil
}
