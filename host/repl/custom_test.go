package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/scripted"
)

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
		{"/re", "/rewind /reload /release"},
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
