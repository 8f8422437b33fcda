package command

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	list := customs(work, []string{"/help"})
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
