package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindAgentsMD: the user's file, then the repository root's down to
// the work dir's (AGENTS.md, then .kosong/AGENTS.md in each folder);
// nothing above the repository root, nothing but the work dir outside a
// repository; the budget cuts the most general files first.
func TestFindAgentsMD(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string // relative to a temporary root
		work   string
		budget int
		want   []string // relative path=text, most general first
	}{
		{"repository", map[string]string{"top/AGENTS.md": "above the repo", "top/repo/.git/HEAD": "x",
			"top/repo/AGENTS.md": "root", "top/repo/.kosong/AGENTS.md": "root kosong", "top/repo/a/AGENTS.md": "a",
			"top/repo/a/b/AGENTS.md": "work", "cfg/kosong-host/AGENTS.md": "user"},
			"top/repo/a/b", 1000, []string{"cfg/kosong-host/AGENTS.md=user", "top/repo/AGENTS.md=root",
				"top/repo/.kosong/AGENTS.md=root kosong", "top/repo/a/AGENTS.md=a", "top/repo/a/b/AGENTS.md=work"}},
		{"git file (worktree)", map[string]string{"repo/.git": "gitdir: elsewhere", "repo/AGENTS.md": "root", "repo/sub/x": ""},
			"repo/sub", 1000, []string{"repo/AGENTS.md=root"}},
		{"no repository", map[string]string{"up/AGENTS.md": "parent", "up/work/.kosong/AGENTS.md": "mine"},
			"up/work", 1000, []string{"up/work/.kosong/AGENTS.md=mine"}},
		{"budget keeps the work dir's", map[string]string{"repo/.git/HEAD": "x", "repo/AGENTS.md": "0123456789",
			"repo/w/AGENTS.md": "abcdef", "cfg/kosong-host/AGENTS.md": "user"},
			"repo/w", 10, []string{"cfg/kosong-host/AGENTS.md=", "repo/AGENTS.md=0123", "repo/w/AGENTS.md=abcdef"}},
		{"empty and directory skipped", map[string]string{"w/AGENTS.md/x": "", "w/.kosong/AGENTS.md": "  \n", "v/.kosong": "a file"},
			"w", 1000, nil},
		{".kosong is a file", map[string]string{"v/.kosong": "a file", "v/AGENTS.md": "v"}, "v", 1000, []string{"v/AGENTS.md=v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, body := range tt.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(root, "cfg")}
			found, err := FindAgentsMD(filepath.Join(root, tt.work), func(k string) string { return env[k] }, tt.budget)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range found {
				rel, _ := filepath.Rel(root, f.Path)
				got = append(got, rel+"="+f.Text)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("found %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestAgentsMDCutIsSaid: a file cut by the budget says so in the prompt.
func TestAgentsMDCutIsSaid(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte(strings.Repeat("x", MaxAgentsMD+10)), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := agentsMD(dir, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "[... cut: the AGENTS.md files together are read up to 64 KiB]") || strings.Count(got, "x") != MaxAgentsMD {
		t.Fatalf("cut file: %d x, tail %q", strings.Count(got, "x"), got[len(got)-80:])
	}
}

// TestAgentsMDUnreadable: an AGENTS.md that cannot be read is an error
// naming it.
func TestAgentsMDUnreadable(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads every file")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "AGENTS.md")
	if err := os.WriteFile(p, []byte("x"), 0o000); err != nil {
		t.Fatal(err)
	}
	_, err := Builtins(Options{WorkDir: dir, Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("err %v", err)
	}
}
