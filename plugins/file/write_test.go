//go:build unix

package file

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

type diffData struct {
	Path    string `json:"path"`
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		approver plugintest.Approver
		args     string // %[1]s is the work dir, {other} another dir
		kind     pluginsdk.ResultKind
		message  string // substring
		feedback string
		action   string // approval asked, "" for none
		path     string // file checked afterwards, relative to the work dir or absolute with {other}
		want     string // its content ("" with wantGone for no file)
		wantGone bool
		diff     *diffData // expected display block, paths relative
	}{
		{name: "create", args: `{"path": "new.txt", "content": "hello\n"}`, kind: pluginsdk.KindOk,
			message: "Wrote 6 bytes to `new.txt`.", action: actionEdit, path: "new.txt", want: "hello\n",
			diff: &diffData{Path: "new.txt", OldText: "", NewText: "hello\n"}},
		{name: "overwrite", files: map[string]string{"a.txt": "old\n"}, args: `{"path": "a.txt", "content": "new\n"}`,
			kind: pluginsdk.KindOk, action: actionEdit, path: "a.txt", want: "new\n",
			diff: &diffData{Path: "a.txt", OldText: "old\n", NewText: "new\n"}},
		{name: "append", files: map[string]string{"log.txt": "one\n"}, args: `{"path": "log.txt", "content": "two\n", "mode": "append"}`,
			kind: pluginsdk.KindOk, message: "Appended 4 bytes to `log.txt`; it now has 8 bytes.", action: actionEdit,
			path: "log.txt", want: "one\ntwo\n", diff: &diffData{Path: "log.txt", OldText: "one\n", NewText: "one\ntwo\n"}},
		{name: "append creates", args: `{"path": "fresh.txt", "content": "x", "mode": "append"}`, kind: pluginsdk.KindOk,
			action: actionEdit, path: "fresh.txt", want: "x"},
		{name: "UTF-8 and no final newline", args: `{"path": "u.txt", "content": "世界 🙂"}`, kind: pluginsdk.KindOk,
			action: actionEdit, path: "u.txt", want: "世界 🙂"},
		{name: "missing parent directory", args: `{"path": "no/such/dir/f.txt", "content": "x"}`, kind: pluginsdk.KindError,
			message: "WriteFile does not create directories", path: "no", wantGone: true},
		{name: "path is a directory", files: map[string]string{"d/": ""}, args: `{"path": "d", "content": "x"}`,
			kind: pluginsdk.KindError, message: "`d` is a directory"},
		{name: "rejected with feedback", files: map[string]string{"a.txt": "keep\n"}, approver: plugintest.RejectAll("not that file"),
			args: `{"path": "a.txt", "content": "lost\n"}`, kind: pluginsdk.KindRejected, feedback: "not that file",
			action: actionEdit, path: "a.txt", want: "keep\n"},
		{name: "rejected new file is not created", approver: plugintest.RejectAll(""), args: `{"path": "n.txt", "content": "x"}`,
			kind: pluginsdk.KindRejected, action: actionEdit, path: "n.txt", wantGone: true},
		{name: "outside the work dir", args: `{"path": "{other}/out.txt", "content": "x\n"}`, kind: pluginsdk.KindOk,
			action: actionEditOutside, path: "{other}/out.txt", want: "x\n"},
		{name: "dot-dot out of the work dir", args: `{"path": "../escape-{i}.txt", "content": "x\n"}`, kind: pluginsdk.KindOk,
			action: actionEditOutside, path: "../escape-{i}.txt", want: "x\n"},
		{name: "symlink pointing outside is written through, with the outside approval", files: map[string]string{"@link.txt": "{other}/target.txt"},
			args: `{"path": "link.txt", "content": "through\n"}`, kind: pluginsdk.KindOk, action: actionEditOutside,
			path: "{other}/target.txt", want: "through\n"},
		{name: "symlinked directory pointing outside", files: map[string]string{"@linkdir": "{other}"},
			args: `{"path": "linkdir/new.txt", "content": "y"}`, kind: pluginsdk.KindOk, action: actionEditOutside,
			path: "{other}/new.txt", want: "y"},
		{name: "symlink inside the work dir", files: map[string]string{"real.txt": "r\n", "@alias.txt": "real.txt"},
			args: `{"path": "alias.txt", "content": "via alias\n"}`, kind: pluginsdk.KindOk, action: actionEdit,
			path: "real.txt", want: "via alias\n"},
		{name: "rejected outside write", approver: plugintest.RejectAll(""), args: `{"path": "{other}/no.txt", "content": "x"}`,
			kind: pluginsdk.KindRejected, action: actionEditOutside, path: "{other}/no.txt", wantGone: true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			work, other := t.TempDir(), t.TempDir()
			expand := strings.NewReplacer("{other}", other, "{i}", fmt.Sprint(i)).Replace
			files := map[string]string{}
			for name, content := range tt.files {
				if target, ok := strings.CutPrefix(name, "@"); ok {
					if err := os.Symlink(expand(content), filepath.Join(work, target)); err != nil {
						t.Fatal(err)
					}
					continue
				}
				files[name] = content
			}
			writeTree(t, work, files)
			h := harness(t, work, tt.approver)
			got := h.MustCall(t, "WriteFile", expand(tt.args))
			if got.Kind != tt.kind || !strings.Contains(got.Message, tt.message) || got.Feedback != tt.feedback {
				t.Fatalf("got %+v", got)
			}
			approvals := h.Approvals()
			switch {
			case tt.action == "" && len(approvals) != 0:
				t.Fatalf("approval asked: %+v", approvals)
			case tt.action != "" && (len(approvals) != 1 || approvals[0].Action != tt.action || !strings.HasPrefix(approvals[0].Description, "Write file `") && !strings.HasPrefix(approvals[0].Description, "Append to file `")):
				t.Fatalf("approvals = %+v, want action %q", approvals, tt.action)
			}
			if tt.path != "" {
				p := expand(tt.path)
				if !filepath.IsAbs(p) {
					p = filepath.Join(work, p)
				}
				b, err := os.ReadFile(p)
				switch {
				case tt.wantGone && !os.IsNotExist(err):
					t.Fatalf("%s exists: %v", p, err)
				case !tt.wantGone && (err != nil || string(b) != tt.want):
					t.Fatalf("%s = %q, %v; want %q", p, b, err, tt.want)
				}
			}
			if tt.diff != nil {
				if len(got.Display) != 1 || got.Display[0].Kind != "diff" {
					t.Fatalf("display = %v", got.Display)
				}
				var d diffData
				if err := json.Unmarshal(got.Display[0].Data.(json.RawMessage), &d); err != nil {
					t.Fatal(err)
				}
				want := *tt.diff
				want.Path = filepath.Join(work, want.Path)
				if d != want {
					t.Fatalf("diff = %+v, want %+v", d, want)
				}
			}
		})
	}
}

func TestWriteFileAtomicKeepsMode(t *testing.T) {
	work := t.TempDir()
	p := filepath.Join(work, "script.sh")
	if err := os.WriteFile(p, []byte("old"), 0o750); err != nil {
		t.Fatal(err)
	}
	got := harness(t, work, nil).MustCall(t, "WriteFile", `{"path": "script.sh", "content": "#!/bin/sh\n"}`)
	if got.Kind != pluginsdk.KindOk {
		t.Fatalf("got %+v", got)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o750 || readFile(t, p) != "#!/bin/sh\n" {
		t.Fatalf("mode %v, err %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(work)
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}
