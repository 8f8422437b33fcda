package acp

import (
	"context"

	acpsdk "github.com/coder/acp-go-sdk"
)

// editorFiles lends the client's files to a session's plugins (the Editor
// capability, host/capability): reads and writes go to fs/read_text_file
// and fs/write_text_file, so the tools see unsaved buffers and the user
// can undo their edits in the editor. The calls come after the tool call's
// approval, which the plugin asks first.
type editorFiles struct {
	conn    *acpsdk.AgentSideConnection
	session *session
}

func (e *editorFiles) ReadTextFile(ctx context.Context, path string) (string, error) {
	res, err := e.conn.ReadTextFile(ctx, acpsdk.ReadTextFileRequest{SessionId: acpsdk.SessionId(e.session.id), Path: path})
	if err != nil {
		return "", err
	}
	return res.Content, nil
}

func (e *editorFiles) WriteTextFile(ctx context.Context, path, content string) error {
	_, err := e.conn.WriteTextFile(ctx, acpsdk.WriteTextFileRequest{SessionId: acpsdk.SessionId(e.session.id), Path: path, Content: content})
	return err
}

// lendsFiles says whether the client advertised both fs methods.
func lendsFiles(c acpsdk.ClientCapabilities) bool {
	return c.Fs.ReadTextFile && c.Fs.WriteTextFile
}
