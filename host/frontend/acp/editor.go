package acp

import (
	"context"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
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

// editorTerminal lends the client's terminal to a session's plugins (the
// Terminal capability): a command runs in terminal/create, shown in its
// tool call (a terminal content), waited for, and its output read; when
// the call is cancelled the terminal is killed; it is always released.
type editorTerminal struct {
	conn    *acpsdk.AgentSideConnection
	session *session
}

func (e *editorTerminal) Run(ctx context.Context, req pluginrpc.TerminalRun) (pluginrpc.TerminalResult, error) {
	sid := acpsdk.SessionId(e.session.id)
	create := acpsdk.CreateTerminalRequest{SessionId: sid, Command: req.Command, Args: req.Args, Cwd: acpsdk.Ptr(req.Cwd)}
	if req.OutputByteLimit > 0 {
		create.OutputByteLimit = acpsdk.Ptr(int(req.OutputByteLimit))
	}
	t, err := e.conn.CreateTerminal(ctx, create)
	if err != nil {
		return pluginrpc.TerminalResult{}, err
	}
	// The terminal outlives a cancelled ctx long enough to be killed,
	// read and released.
	after := context.WithoutCancel(ctx)
	defer func() {
		_, _ = e.conn.ReleaseTerminal(after, acpsdk.ReleaseTerminalRequest{SessionId: sid, TerminalId: t.TerminalId})
	}()
	if req.ToolCallID != "" {
		e.session.out.send(ctx, acpsdk.UpdateToolCall(acpsdk.ToolCallId(req.ToolCallID),
			acpsdk.WithUpdateContent([]acpsdk.ToolCallContent{acpsdk.ToolTerminalRef(t.TerminalId)})))
	}
	_, werr := e.conn.WaitForTerminalExit(ctx, acpsdk.WaitForTerminalExitRequest{SessionId: sid, TerminalId: t.TerminalId})
	if werr != nil {
		_, _ = e.conn.KillTerminal(after, acpsdk.KillTerminalRequest{SessionId: sid, TerminalId: t.TerminalId})
	}
	out, err := e.conn.TerminalOutput(after, acpsdk.TerminalOutputRequest{SessionId: sid, TerminalId: t.TerminalId})
	if werr != nil {
		return pluginrpc.TerminalResult{Output: out.Output, Truncated: out.Truncated}, werr
	}
	if err != nil {
		return pluginrpc.TerminalResult{}, err
	}
	r := pluginrpc.TerminalResult{Output: out.Output, Truncated: out.Truncated}
	if st := out.ExitStatus; st != nil {
		switch {
		case st.ExitCode != nil:
			r.ExitCode = *st.ExitCode
		case st.Signal != nil:
			r.ExitCode, r.Signal = -1, *st.Signal
		}
	}
	return r, nil
}
