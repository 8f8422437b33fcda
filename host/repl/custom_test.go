package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/scripted"
)

func TestCustomCommands(t *testing.T) {
	cfg, work := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	files := map[string]string{
		filepath.Join(cfg, "kosong-host", "commands", "both.md"):  "user's",
		filepath.Join(cfg, "kosong-host", "commands", "mine.md"):  "# Mine\nDo $ARGUMENTS and $ARGUMENTS.",
		filepath.Join(work, ".kosong", "commands", "both.md"):     "---\ndescription: \"the project's\"\n---\nproject's",
		filepath.Join(work, ".kosong", "commands", "help.md"):     "shadows a built-in",
		filepath.Join(work, ".kosong", "commands", "notes.txt"):   "not Markdown",
		filepath.Join(work, ".kosong", "commands", "-bad.md"):     "bad name",
		filepath.Join(work, ".kosong", "commands", "big.md"):      strings.Repeat("x", MaxCustomCommand+1),
		filepath.Join(work, ".kosong", "commands", "empty.md"):    "---\ndescription: nothing\n---\n",
		filepath.Join(work, ".kosong", "commands", "dir.md", "x"): "",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := customCommands(work)
	var names []string
	byName := map[string]customCommand{}
	for _, c := range list {
		names = append(names, c.name+"="+c.description)
		byName[c.name] = c
	}
	want := "/big=|/both=the project's|/empty=nothing|/mine=Mine"
	if strings.Join(names, "|") != want {
		t.Fatalf("commands %q, want %q", strings.Join(names, "|"), want)
	}
	tests := []struct {
		name, args, want, wantErr string
	}{
		{"/mine", "x", "# Mine\nDo x and x.", ""},
		{"/both", "", "project's", ""},
		{"/both", "more", "project's\n\nmore", ""},
		{"/empty", "", "", ""},
		{"/big", "", "", "custom command /big: " + byName["/big"].path + " is over 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+tt.args, func(t *testing.T) {
			got, err := expandCustom(byName[tt.name], tt.args)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestCompleteCommandsAndPaths(t *testing.T) {
	cfg, work := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	if err := os.MkdirAll(filepath.Join(work, ".kosong", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, ".kosong", "commands", "release.md"), []byte("cut a release"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	r := New(Config{})
	tests := []struct{ line, want string }{
		{"/re", "/reload /rewind /release"},
		{"/model /re", ""},
		{"hello", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(r.Complete(tt.line), " "); got != tt.want {
			t.Errorf("Complete(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestCustomCommandThroughREPL: /NAME ARGS reaches the model as the
// file's text; an empty command sends nothing and says so.
func TestCustomCommandThroughREPL(t *testing.T) {
	work := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := filepath.Join(work, ".kosong", "commands")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"hello.md": "Say hello to $ARGUMENTS.", "empty.md": "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work)
	h := runREPL(t, []scripted.Turn{{Text: "Hello."}}, "/empty\n/hello the world\n", false)
	reqs := h.prov.Requests()
	if len(reqs) != 1 || reqs[0].History[len(reqs[0].History)-1].Text() != "Say hello to the world." {
		t.Fatalf("requests %+v", reqs)
	}
	if !strings.Contains(h.out.String(), "custom command /empty ("+filepath.Join(dir, "empty.md")+") is empty; nothing was sent to the model") {
		t.Fatalf("output:\n%s", h.out.String())
	}
}
