package capability

import (
	"context"
	"path/filepath"

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

// editor checks a request of the Editor capability: served here, for a
// call in progress of this plugin whose tool declared Editor, with an
// absolute path.
func (h *Host) editor(what, toolCallID, path string) error {
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
	return nil
}

// ReadTextFile reads path as the editor has it, for a call in progress.
func (h *Host) ReadTextFile(ctx context.Context, toolCallID, path string) (string, error) {
	if err := h.editor("editor read", toolCallID, path); err != nil {
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
	if err := h.editor("editor write", toolCallID, path); err != nil {
		return err
	}
	if err := h.Editor.WriteTextFile(ctx, path, content); err != nil {
		return status.Errorf(codes.Unavailable, "the editor did not write %s: %v", path, err)
	}
	return nil
}
