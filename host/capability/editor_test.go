package capability

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kosong-host/kosong-host/pluginsdk/pluginrpc"
)

type fakeEditor struct {
	files map[string]string
	fail  error
}

func (e *fakeEditor) ReadTextFile(_ context.Context, path string) (string, error) {
	if e.fail != nil {
		return "", e.fail
	}
	return e.files[path], nil
}

func (e *fakeEditor) WriteTextFile(_ context.Context, path, content string) error {
	if e.fail != nil {
		return e.fail
	}
	e.files[path] = content
	return nil
}

// TestEditor: Editor is offered only with an editor; a read or write must
// cite a call in progress of this plugin whose tool declared Editor, with
// an absolute path; the editor's failure reaches the plugin.
func TestEditor(t *testing.T) {
	ed := &fakeEditor{files: map[string]string{"/w/a": "buffer"}}
	mine := calls{"c1": "Write", "c2": "Other"}
	declared := map[string][]string{"Write": {pluginrpc.CapEditor}}
	tests := []struct {
		name    string
		host    *Host
		id      string
		path    string
		code    codes.Code
		message string
	}{
		{"a running call", &Host{Plugin: "file", Editor: ed, Calls: mine, Declared: declared}, "c1", "/w/a", codes.OK, ""},
		{"no editor", &Host{Plugin: "file", Calls: mine, Declared: declared}, "c1", "/w/a", codes.Unimplemented, "offers no Editor"},
		{"no call of its own", &Host{Plugin: "file", Editor: ed, Calls: mine, Declared: declared}, "x", "/w/a",
			codes.FailedPrecondition, "no tool call of its own in progress"},
		{"undeclared", &Host{Plugin: "file", Editor: ed, Calls: mine, Declared: declared}, "c2", "/w/a",
			codes.FailedPrecondition, "tool Other of plugin file did not declare the Editor capability"},
		{"relative path", &Host{Plugin: "file", Editor: ed, Calls: mine, Declared: declared}, "c1", "a",
			codes.InvalidArgument, `path "a" of tool Write is not absolute`},
		{"the editor fails", &Host{Plugin: "file", Editor: &fakeEditor{fail: errors.New("closed")}, Calls: mine, Declared: declared}, "c1", "/w/a",
			codes.Unavailable, "the editor did not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content, rerr := tt.host.ReadTextFile(context.Background(), tt.id, tt.path)
			werr := tt.host.WriteTextFile(context.Background(), tt.id, tt.path, "new")
			for _, err := range []error{rerr, werr} {
				if status.Code(err) != tt.code || (tt.message != "" && !strings.Contains(err.Error(), tt.message)) {
					t.Errorf("error %v, want %s %q", err, tt.code, tt.message)
				}
			}
			if tt.code == codes.OK && (content != "buffer" || ed.files["/w/a"] != "new") {
				t.Errorf("read %q, buffers %q", content, ed.files)
			}
		})
	}
	if slices.Contains((&Host{}).Offered(), pluginrpc.CapEditor) || !slices.Contains((&Host{Editor: ed}).Offered(), pluginrpc.CapEditor) {
		t.Errorf("Editor offered without an editor, or not with one")
	}
}

type fakeTerminal struct{ err error }

func (f fakeTerminal) Run(_ context.Context, req pluginrpc.TerminalRun) (pluginrpc.TerminalResult, error) {
	return pluginrpc.TerminalResult{Output: "ran " + req.Command}, f.err
}

// TestTerminal: Terminal is offered only with a terminal; a command must
// cite a call in progress of this plugin whose tool declared Terminal, with
// a command and an absolute cwd; the terminal's failure reaches the plugin.
func TestTerminal(t *testing.T) {
	mine := calls{"c1": "Shell", "c2": "Other"}
	declared := map[string][]string{"Shell": {pluginrpc.CapTerminal}}
	ok := pluginrpc.TerminalRun{ToolCallID: "c1", Command: "/bin/sh", Cwd: "/w"}
	tests := []struct {
		name    string
		host    *Host
		req     pluginrpc.TerminalRun
		code    codes.Code
		message string
	}{
		{"a running call", &Host{Plugin: "shell", Terminal: fakeTerminal{}, Calls: mine, Declared: declared}, ok, codes.OK, ""},
		{"no terminal", &Host{Plugin: "shell", Calls: mine, Declared: declared}, ok, codes.Unimplemented, "offers no Terminal"},
		{"no call of its own", &Host{Plugin: "shell", Terminal: fakeTerminal{}, Calls: mine, Declared: declared},
			pluginrpc.TerminalRun{ToolCallID: "x", Command: "/bin/sh", Cwd: "/w"}, codes.FailedPrecondition, "no tool call of its own"},
		{"undeclared", &Host{Plugin: "shell", Terminal: fakeTerminal{}, Calls: mine, Declared: declared},
			pluginrpc.TerminalRun{ToolCallID: "c2", Command: "/bin/sh", Cwd: "/w"}, codes.FailedPrecondition, "did not declare the Terminal capability"},
		{"relative cwd", &Host{Plugin: "shell", Terminal: fakeTerminal{}, Calls: mine, Declared: declared},
			pluginrpc.TerminalRun{ToolCallID: "c1", Command: "/bin/sh", Cwd: "w"}, codes.InvalidArgument, "needs a command and an absolute cwd"},
		{"the terminal fails", &Host{Plugin: "shell", Terminal: fakeTerminal{err: errors.New("gone")}, Calls: mine, Declared: declared}, ok,
			codes.Unavailable, "the editor's terminal did not run /bin/sh: gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.host.RunInTerminal(context.Background(), tt.req)
			if status.Code(err) != tt.code || (tt.message != "" && !strings.Contains(err.Error(), tt.message)) {
				t.Fatalf("error %v, want %s %q", err, tt.code, tt.message)
			}
			if tt.code == codes.OK && r.Output != "ran /bin/sh" {
				t.Fatalf("result %+v", r)
			}
		})
	}
	if !slices.Contains((&Host{Terminal: fakeTerminal{}}).Offered(), pluginrpc.CapTerminal) || slices.Contains((&Host{}).Offered(), pluginrpc.CapTerminal) {
		t.Errorf("Terminal offered without a terminal, or not with one")
	}
}

// TestEditorBounds: a sandboxed plugin's editor reads and writes are held
// to its sandbox's folders: writes beneath a write folder, reads beneath
// either; a symbolic link out of them, or a path outside, is refused.
func TestEditorBounds(t *testing.T) {
	root := t.TempDir()
	work, docs, outside := filepath.Join(root, "work"), filepath.Join(root, "docs"), filepath.Join(root, "outside")
	for _, d := range []string{work, docs, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(work, "escape")); err != nil {
		t.Fatal(err)
	}
	ed := &fakeEditor{files: map[string]string{}}
	h := &Host{Plugin: "file", Editor: ed, Calls: calls{"c1": "Write"},
		Declared:     map[string][]string{"Write": {pluginrpc.CapEditor}},
		EditorBounds: &Bounds{Read: []string{docs}, Write: []string{work}}}
	tests := []struct {
		path            string
		readOK, writeOK bool
	}{
		{filepath.Join(work, "new.txt"), true, true},
		{filepath.Join(work, "sub", "..", "a.txt"), true, true},
		{filepath.Join(docs, "guide.md"), true, false},
		{filepath.Join(outside, "x"), false, false},
		{filepath.Join(work, "escape", "x"), false, false},
		{filepath.Join(root, "work-other", "x"), false, false},
	}
	for _, tt := range tests {
		_, rerr := h.ReadTextFile(context.Background(), "c1", tt.path)
		werr := h.WriteTextFile(context.Background(), "c1", tt.path, "x")
		for _, c := range []struct {
			err error
			ok  bool
			op  string
		}{{rerr, tt.readOK, "read"}, {werr, tt.writeOK, "write"}} {
			if c.ok && c.err != nil && status.Code(c.err) == codes.PermissionDenied {
				t.Errorf("%s %s refused: %v", c.op, tt.path, c.err)
			}
			if !c.ok && (status.Code(c.err) != codes.PermissionDenied || !strings.Contains(c.err.Error(), "outside the sandbox of plugin file")) {
				t.Errorf("%s %s: %v, want refused as outside the sandbox", c.op, tt.path, c.err)
			}
		}
	}
}
