package pluginsdk

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateText(t *testing.T) {
	m := TruncatedMarker
	tests := []struct {
		name     string
		in       string
		maxChars int
		maxLine  int
		want     string
		cut      bool
	}{
		{"empty", "", 10, 5, "", false},
		{"fits", "ab\ncd\n", 10, 5, "ab\ncd\n", false},
		{"exactly at the caps", "abcde", 5, 5, "abcde", false},
		{"long line cut, marker included in the line cap", "abcdefghijklmnopqrstuvwxyz\nok\n", 100, 16,
			"ab" + m + "\nok\n", true},
		{"multi-byte characters counted as one", "ééééé\n", 100, 5, "ééééé\n", false},
		{"multi-byte line cut on a rune boundary", strings.Repeat("世", 20) + "\n", 100, 16,
			"世世" + m + "\n", true},
		{"CRLF kept, \\r not counted in the line", "abcde\r\nfg\r\n", 100, 5, "abcde\r\nfg\r\n", false},
		{"CRLF line cut keeps its ending", strings.Repeat("x", 20) + "\r\nfg\r\n", 100, 15,
			"x" + m + "\r\nfg\r\n", true},
		{"total cap cuts with the marker inside the budget", strings.Repeat("a", 10) + "\n" + strings.Repeat("b", 10) + "\n", 20, 100,
			strings.Repeat("a", 6) + m, true},
		{"total cap after whole lines", "aaa\nbbb\n" + strings.Repeat("c", 30), 22, 100,
			"aaa\nbbb\n" + m, true},
		{"invalid UTF-8 replaced", "a\xffb", 10, 10, "a\uFFFDb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := TruncateText(tt.in, tt.maxChars, tt.maxLine)
			if got != tt.want || cut != tt.cut {
				t.Fatalf("TruncateText(%q, %d, %d) = %q, %v; want %q, %v", tt.in, tt.maxChars, tt.maxLine, got, cut, tt.want, tt.cut)
			}
		})
	}
}

// TestTruncateTextInvariants checks on random text that the caps always hold,
// that no character is ever split and that uncut text is returned unchanged.
func TestTruncateTextInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "é", "世", "🙂", "\n", "\r\n", " "}
	for i := range 2000 {
		var b strings.Builder
		for range r.IntN(200) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		in := b.String()
		maxChars, maxLine := markerRunes+r.IntN(100), markerRunes+r.IntN(30)
		got, cut := TruncateText(in, maxChars, maxLine)
		if !utf8.ValidString(got) {
			t.Fatalf("#%d: invalid UTF-8 %q", i, got)
		}
		if n := utf8.RuneCountInString(got); n > maxChars {
			t.Fatalf("#%d: %d runes > %d: %q", i, n, maxChars, got)
		}
		for _, line := range strings.Split(got, "\n") {
			if n := utf8.RuneCountInString(strings.TrimSuffix(line, "\r")); n > maxLine && !strings.HasSuffix(line, TruncatedMarker) {
				t.Fatalf("#%d: line of %d runes > %d: %q", i, n, maxLine, line)
			}
		}
		if !cut && got != in {
			t.Fatalf("#%d: not cut but changed: %q -> %q", i, in, got)
		}
		if cut && !strings.Contains(got, TruncatedMarker) {
			t.Fatalf("#%d: cut without a marker: %q", i, got)
		}
	}
}

func TestCapOutput(t *testing.T) {
	long := strings.Repeat("x", MaxOutputLineChars+10) + "\n"
	huge := strings.Repeat(strings.Repeat("é", 99)+"\n", 1000) // 100,000 runes
	img := Part{MimeType: "image/png", Data: []byte{1, 2, 3}}

	t.Run("small output untouched", func(t *testing.T) {
		state := t.TempDir()
		r := capOutput(Ok("hello").WithMessage("m"), "call_1", state)
		if r.Text() != "hello" || r.Message != "m" {
			t.Fatalf("got %+v", r)
		}
		if _, err := os.Stat(filepath.Join(state, "outputs")); !os.IsNotExist(err) {
			t.Fatalf("outputs dir created for an uncut result: %v", err)
		}
	})

	t.Run("long line cut and saved", func(t *testing.T) {
		state := t.TempDir()
		r := capOutput(Ok(long).WithMessage("Done."), "call_7", state)
		line := strings.TrimSuffix(r.Text(), "\n")
		if utf8.RuneCountInString(line) != MaxOutputLineChars || !strings.HasSuffix(line, TruncatedMarker) {
			t.Fatalf("line not cut to the cap: %d runes", utf8.RuneCountInString(line))
		}
		path := filepath.Join(state, "outputs", "call_7.txt")
		if !strings.HasPrefix(r.Message, "Done.\n") || !strings.Contains(r.Message, "truncated") || !strings.Contains(r.Message, path) {
			t.Fatalf("message = %q", r.Message)
		}
		saved, err := os.ReadFile(path)
		if err != nil || string(saved) != long {
			t.Fatalf("saved output: %v, %d bytes", err, len(saved))
		}
	})

	t.Run("total cap shared by parts, images kept", func(t *testing.T) {
		state := t.TempDir()
		in := Result{Kind: KindError, Message: "failed", Output: []Part{TextPart(huge[:len(huge)/2]), img, TextPart(huge[len(huge)/2:]), TextPart("tail")}}
		r := capOutput(in, "a/../b", state)
		if r.Kind != KindError {
			t.Fatalf("kind changed: %v", r.Kind)
		}
		n, images := 0, 0
		for _, p := range r.Output {
			if p.IsImage() {
				images++
			}
			n += utf8.RuneCountInString(p.Text)
		}
		if n > MaxOutputChars || n < MaxOutputChars-MaxOutputLineChars || images != 1 {
			t.Fatalf("%d runes (cap %d), %d images", n, MaxOutputChars, images)
		}
		if !strings.HasSuffix(r.Text(), TruncatedMarker) || !utf8.ValidString(r.Text()) {
			t.Fatalf("bad end: %q", r.Text()[len(r.Text())-40:])
		}
		saved, err := os.ReadFile(filepath.Join(state, "outputs", "a_.._b.txt"))
		if err != nil || string(saved) != huge+"tail" {
			t.Fatalf("saved output: %v, %d bytes", err, len(saved))
		}
	})

	t.Run("no state dir", func(t *testing.T) {
		r := capOutput(Ok(long), "call_1", "")
		if !strings.Contains(r.Message, "truncated") || !strings.Contains(r.Message, "could not be saved") {
			t.Fatalf("message = %q", r.Message)
		}
	})

	t.Run("invalid UTF-8 made valid for the wire", func(t *testing.T) {
		r := capOutput(Ok("a\xff").WithMessage("m\xfe").WithBrief("b\xfd"), "c", t.TempDir())
		if r.Text() != "a\uFFFD" || r.Message != "m\uFFFD" || r.Brief != "b\uFFFD" {
			t.Fatalf("got %+v", r)
		}
	})
}
