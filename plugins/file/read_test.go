package file

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

func numbered(from int, lines ...string) string {
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", from+i, l)
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	work, elsewhere := t.TempDir(), t.TempDir()
	writeTree(t, elsewhere, map[string]string{"outside.txt": "far away\n"})
	five := "one\ntwo\nthree\nfour\nfive\n"
	writeTree(t, work, map[string]string{
		"five.txt":     five,
		"nofinal.txt":  "a\nb",
		"crlf.txt":     "a\r\nb\r\n",
		"empty.txt":    "",
		"utf8.txt":     "héllo wörld 世界 🙂\n",
		"latin1.txt":   "caf\xe9 au lait, a longer line of plain ASCII text around it\n",
		"binary.bin":   "PK\x03\x04\x00\x00binary",
		"garbage.bin":  strings.Repeat("\xff\xfe\x80\x81", 100),
		"dir/file.txt": "x\n",
	})
	abs := func(name string) string { return filepath.Join(work, name) }

	tests := []struct {
		name    string
		args    string
		kind    pluginsdk.ResultKind
		output  string
		message string // substring
	}{
		{"whole file", `{"path": "five.txt"}`, pluginsdk.KindOk,
			numbered(1, "one", "two", "three", "four", "five"), "Read lines 1-5 of 5. End of file reached."},
		{"absolute path", fmt.Sprintf(`{"path": %q}`, abs("five.txt")), pluginsdk.KindOk,
			numbered(1, "one", "two", "three", "four", "five"), "End of file reached."},
		{"outside the work dir is readable", fmt.Sprintf(`{"path": %q}`, filepath.Join(elsewhere, "outside.txt")), pluginsdk.KindOk,
			numbered(1, "far away"), "Read lines 1-1 of 1."},
		{"offset and count", `{"path": "five.txt", "line_offset": 2, "n_lines": 2}`, pluginsdk.KindOk,
			numbered(2, "two", "three"), "Read lines 2-3 of 5. More lines follow: continue with line_offset=4."},
		{"negative offset counts from the end", `{"path": "five.txt", "line_offset": -2}`, pluginsdk.KindOk,
			numbered(4, "four", "five"), "Read lines 4-5 of 5. End of file reached."},
		{"negative offset past the start", `{"path": "five.txt", "line_offset": -10, "n_lines": 1}`, pluginsdk.KindOk,
			numbered(1, "one"), "continue with line_offset=2"},
		{"offset past the end", `{"path": "five.txt", "line_offset": 9}`, pluginsdk.KindOk, "",
			"The file has 5 lines; line_offset 9 is past its end."},
		{"offset 0", `{"path": "five.txt", "line_offset": 0}`, pluginsdk.KindError, "", "line_offset must not be 0"},
		{"no final newline", `{"path": "nofinal.txt"}`, pluginsdk.KindOk, numbered(1, "a", "b"), "Read lines 1-2 of 2. End of file reached."},
		{"CRLF", `{"path": "crlf.txt"}`, pluginsdk.KindOk, numbered(1, "a", "b"), "End of file reached."},
		{"empty file", `{"path": "empty.txt"}`, pluginsdk.KindOk, "", "The file is empty."},
		{"UTF-8", `{"path": "utf8.txt"}`, pluginsdk.KindOk, numbered(1, "héllo wörld 世界 🙂"), "End of file reached."},
		{"a stray Latin-1 byte is shown as U+FFFD", `{"path": "latin1.txt"}`, pluginsdk.KindOk,
			numbered(1, "caf\uFFFD au lait, a longer line of plain ASCII text around it"), "End of file reached."},
		{"missing file", `{"path": "nope.txt"}`, pluginsdk.KindError, "", "`nope.txt` does not exist."},
		{"directory", `{"path": "dir"}`, pluginsdk.KindError, "", "`dir` is a directory, not a file."},
		{"binary with NUL bytes", `{"path": "binary.bin"}`, pluginsdk.KindError, "", "looks like a binary file"},
		{"binary without UTF-8", `{"path": "garbage.bin"}`, pluginsdk.KindError, "", "looks like a binary file"},
	}
	h := harness(t, work, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.MustCall(t, "ReadFile", tt.args)
			if got.Kind != tt.kind || got.Text() != tt.output || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("got %+v\nwant kind %v, output %q, message containing %q", got, tt.kind, tt.output, tt.message)
			}
		})
	}
}

func TestReadFileCaps(t *testing.T) {
	work := t.TempDir()
	lines := func(n int, line string) string { return strings.Repeat(line+"\n", n) }
	writeTree(t, work, map[string]string{
		"long-ascii.txt": strings.Repeat("x", 5000) + "\nshort\n",
		"long-utf8.txt":  strings.Repeat("世", 3000) + "\n",
		"1500.txt":       lines(1500, "l"),
		"wide-utf8.txt":  lines(1000, strings.Repeat("界", 100)), // 300 bytes, 100 runes a line
		"wide-ascii.txt": lines(1000, strings.Repeat("a", 100)),
	})
	h := harness(t, work, nil)

	t.Run("long lines cut to the line cap without splitting a character", func(t *testing.T) {
		for _, name := range []string{"long-ascii.txt", "long-utf8.txt"} {
			got := h.MustCall(t, "ReadFile", fmt.Sprintf(`{"path": %q}`, name))
			first := strings.SplitN(got.Text(), "\n", 2)[0]
			if got.Kind != pluginsdk.KindOk || !utf8.ValidString(got.Text()) || utf8.RuneCountInString(first) != pluginsdk.MaxOutputLineChars ||
				!strings.HasSuffix(first, pluginsdk.TruncatedMarker) {
				t.Fatalf("%s: first line has %d runes: %q...", name, utf8.RuneCountInString(first), first[:40])
			}
			if !strings.Contains(got.Message, "Line 1 was longer than 2000 characters") || strings.Contains(got.Message, "output was truncated") {
				t.Fatalf("%s: message = %q", name, got.Message)
			}
		}
	})

	tests := []struct {
		name, file string
		lastLine   int
		message    string
	}{
		{"1000-line cap", "1500.txt", 1000, "Stopped at the limit of 1000 lines per call. More lines follow: continue with line_offset=1001."},
		{"100 KB cap, multi-byte", "wide-utf8.txt", 332, "Stopped at the limit of 100 KB per call. More lines follow: continue with line_offset=333."},
		{"character cap", "wide-ascii.txt", 462, "Stopped at the limit of 50000 characters per call. More lines follow: continue with line_offset=463."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := h.MustCall(t, "ReadFile", fmt.Sprintf(`{"path": %q}`, tt.file))
			n := strings.Count(got.Text(), "\n")
			if got.Kind != pluginsdk.KindOk || n != tt.lastLine || !strings.Contains(got.Message, tt.message) {
				t.Fatalf("%d lines, message %q", n, got.Message)
			}
			if strings.Contains(got.Message, "output was truncated") {
				t.Fatalf("the SDK had to cut ReadFile's output: %q", got.Message)
			}
		})
	}

	t.Run("n_lines above the cap is refused by the schema", func(t *testing.T) {
		s := compileSchema(t, h, "ReadFile")
		if validates(t, s, `{"path": "x", "n_lines": 1001}`) || !validates(t, s, `{"path": "x", "n_lines": 1000, "line_offset": -3}`) {
			t.Fatal("schema bounds wrong")
		}
	})
}

func TestReadFileUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	work := t.TempDir()
	writeTree(t, work, map[string]string{"secret.txt": "s\n"})
	if err := os.Chmod(filepath.Join(work, "secret.txt"), 0); err != nil {
		t.Fatal(err)
	}
	got := harness(t, work, nil).MustCall(t, "ReadFile", `{"path": "secret.txt"}`)
	if got.Kind != pluginsdk.KindError || !strings.Contains(got.Message, "Permission denied") {
		t.Fatalf("got %+v", got)
	}
}
