package repl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
)

// png1x1 starts like a PNG file.
const png1x1 = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

func TestAttach(t *testing.T) {
	work := t.TempDir()
	files := map[string]string{
		".git/HEAD": "x", ".gitignore": "secret/\n",
		"a.go": "package a", "big.txt": strings.Repeat("é", MaxMentionText), "bin.dat": "\x00\x01\x02",
		"pic.png": png1x1, "dir/one.txt": "", "dir/sub/two.txt": "", "secret/key": "",
	}
	for name, body := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, prompt string
		images       bool
		parts        []string // the parts after the prompt: text, or "image"
		notes        []string
	}{
		{"file, with a full stop", "see @a.go.", false, []string{"<file path=\"a.go\">\npackage a\n</file>"}, []string{"attached @a.go (9 B)"}},
		{"twice is once", "@a.go and @a.go", false, []string{"<file path=\"a.go\">\npackage a\n</file>"}, []string{"attached @a.go (9 B)"}},
		{"no such file", "mail me@example.com or @nope.txt or @bob", false, nil, []string{"@nope.txt: no such file; sent as typed"}},
		{"binary", "@bin.dat", false, nil, []string{"@bin.dat: a binary file (3 B); not attached"}},
		{"image", "@pic.png", true, []string{"<image path=\"pic.png\">", "image", "</image>"}, []string{"attached @pic.png (an image, 16 B)"}},
		{"image, model without images", "@pic.png", false, nil, []string{"@pic.png: an image, and the model does not take images; not attached"}},
		{"folder", "@dir", false, []string{"<directory path=\"dir\">\none.txt\nsub/\n</directory>"}, []string{"attached @dir (a listing of 2 entries)"}},
		{"folder listing leaves out ignored", "@.", false, []string{"<directory path=\".\">\n.gitignore\na.go\nbig.txt\nbin.dat\ndir/\npic.png\n</directory>"}, []string{"attached @. (a listing of 6 entries)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, notes := attach(work, tt.prompt, tt.images)
			if parts[0].Text != tt.prompt {
				t.Fatalf("first part %q", parts[0].Text)
			}
			var got []string
			for _, p := range parts[1:] {
				if p.Type == providers.PartImage {
					got = append(got, "image")
					continue
				}
				got = append(got, p.Text)
			}
			if strings.Join(got, "|") != strings.Join(tt.parts, "|") {
				t.Errorf("parts %q\nwant %q", got, tt.parts)
			}
			if strings.Join(notes, "|") != strings.Join(tt.notes, "|") {
				t.Errorf("notes %q\nwant %q", notes, tt.notes)
			}
		})
	}
	t.Run("over the prompt's budget", func(t *testing.T) {
		budget := t.TempDir()
		var prompt []string
		for i := range MaxMentionTotal/MaxMentionText + 2 {
			name := fmt.Sprintf("f%d.txt", i)
			if err := os.WriteFile(filepath.Join(budget, name), []byte(strings.Repeat("y", MaxMentionText-100)), 0o644); err != nil {
				t.Fatal(err)
			}
			prompt = append(prompt, "@"+name)
		}
		_, notes := attach(budget, strings.Join(prompt, " "), false)
		last := notes[len(notes)-1]
		if last != "@f5.txt: over the 400 KiB the attachments of one prompt may take; not attached" || !strings.Contains(notes[len(notes)-2], "cut at") {
			t.Fatalf("notes %q", notes)
		}
	})
	t.Run("cut", func(t *testing.T) {
		parts, notes := attach(work, "@big.txt", false)
		if len(parts) != 2 || !strings.Contains(parts[1].Text, "[cut at 100 KiB of 200.0 KB; read the rest with ReadFile]") || !strings.HasPrefix(notes[0], "attached @big.txt (200.0 KB), cut at") {
			t.Fatalf("notes %q, part tail %q", notes, parts[1].Text[len(parts[1].Text)-80:])
		}
	})
}

func TestCompletePath(t *testing.T) {
	work := t.TempDir()
	for _, name := range []string{".git/HEAD", ".gitignore", "notes.txt", "node_modules/x", "nested/deep.go", ".hidden"} {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("node_modules/\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ word, want string }{
		{"@n", "@nested/ @notes.txt"},
		{"@nested/", "@nested/deep.go"},
		{"@.h", "@.hidden"},
		{"@missing/", ""},
	}
	for _, tt := range tests {
		if got := strings.Join(completePath(work, tt.word), " "); got != tt.want {
			t.Errorf("completePath(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
