package file

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestRequiredLiteral(t *testing.T) {
	tests := []struct {
		expr string
		lit  string
		fold bool
	}{
		{"TODO", "TODO", false},
		{`func .*Context\(`, "Context(", false},
		{"(?i)todo", "todo", true},
		{"(?i)TODO", "todo", true},
		{`[A-Z]{6,}[0-9]`, "", false},
		{"foo|bar", "", false},
		{"^package main$", "package main", false},
		{`(abc)+x`, "abc", false},
		{`a?bcd`, "bcd", false},
		{`x{2}yy`, "xxyy", false}, // Simplify spells the repeat out
		{"(?i)straße", "", false}, // folded non-ASCII: no prefilter
		{"\uFFFD", "", false},     // also matches invalid UTF-8
		{`Foo(?i:bar)`, "Foo", false},
	}
	for _, tt := range tests {
		lit, fold := requiredLiteral(tt.expr)
		if string(lit) != tt.lit || fold != tt.fold {
			t.Errorf("requiredLiteral(%q) = %q, %v; want %q, %v", tt.expr, lit, fold, tt.lit, tt.fold)
		}
	}
}

// TestFoldFinder compares the finder with a case-insensitive regexp on
// random texts made of a few letters, so that near misses are common.
func TestFoldFinder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("tToOdD kK\n_")
	for _, lit := range []string{"todo", "t", "do", "o_k", "tot", "kkkk", "d odd"} {
		f := newFoldFinder([]byte(lit))
		re := regexp.MustCompile("(?i)" + regexp.QuoteMeta(lit))
		for range 2000 {
			hay := make([]byte, r.IntN(40))
			for i := range hay {
				hay[i] = alphabet[r.IntN(len(alphabet))]
			}
			want := -1
			if loc := re.FindIndex(hay); loc != nil {
				want = loc[0]
			}
			if got := f.index(hay); got != want {
				t.Fatalf("index(%q) of %q = %d, want %d", hay, lit, got, want)
			}
		}
	}
}

func TestSniffBinaryAgreesWithLooksBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pool := []byte("abc \n\t\r\x01\x02\x1b\x7f\xc3\xa9\xff")
	for range 5000 {
		b := make([]byte, r.IntN(100))
		for i := range b {
			b[i] = pool[r.IntN(len(pool))]
		}
		for _, atEOF := range []bool{false, true} {
			if got, want := sniffBinary(b, atEOF), looksBinary(b, atEOF); got != want {
				t.Fatalf("sniffBinary(%q, %v) = %v, looksBinary says %v", b, atEOF, got, want)
			}
		}
	}
	if !sniffBinary(bytes.Repeat([]byte("a\x01"), 10), false) || sniffBinary([]byte("plain text\n"), true) {
		t.Fatal("the ASCII fast path decides wrongly")
	}
}

// TestDFAPrefilter checks that the dfa never misses a line the regexp
// matches, on random lines.
func TestDFAPrefilter(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pool := []byte("aAbZ09_ \t.é\xff")
	exprs := []string{`[A-Z]{2,}[0-9]`, `a.b`, `^ab`, `b$`, `\bab\b`, `(?i)ab|z9`, `[^a-z]{3}`, `é+`, `\pL\d`, `a(b|Z)*0`}
	for _, expr := range exprs {
		prog := newDFAProg(expr)
		if prog == nil {
			t.Fatalf("no dfa for %q", expr)
		}
		re := regexp.MustCompile(expr)
		d := newDFA(prog)
		for range 3000 {
			var data []byte
			for range r.IntN(4) + 1 {
				for range r.IntN(12) {
					data = append(data, pool[r.IntN(len(pool))])
				}
				data = append(data, '\n')
			}
			pos := 0
			for _, line := range bytes.SplitAfter(data, []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				end := pos + len(line) - 1
				if re.Match(line[:len(line)-1]) {
					st, e, ok := d.nextCandidate(data, pos)
					if !ok || st != pos || e != end {
						t.Fatalf("%q on %q: line at %d missed (got %d %d %v)", expr, data, pos, st, e, ok)
					}
				}
				pos = end + 1
			}
		}
	}
	if newDFAProg(`x*`) != nil {
		t.Fatal("a regexp matching the empty string gets a dfa")
	}
}

// TestFastPathMatchesLineByLine compares the whole-file search (prefilters,
// context taken around matches) with the line-by-line search on random
// files, for each output mode and context setting.
func TestFastPathMatchesLineByLine(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	words := []string{"todo", "TODO", "ToDo", "func x(ctx Context)", "ABCDEFG1", "plain", "", "K\u212a", "kk", "é"}
	exprs := []string{"TODO", "(?i)todo", `func .*Context\)`, `[A-Z]{6,}[0-9]`, "(?i)kk", "^$", "é|plain"}
	path := t.TempDir() + "/f.txt"
	for i := range 3000 {
		var sb strings.Builder
		for range r.IntN(12) {
			sb.WriteString(words[r.IntN(len(words))])
			if r.IntN(5) == 0 {
				sb.WriteString("\r")
			}
			sb.WriteString("\n")
		}
		if r.IntN(3) == 0 {
			sb.WriteString(words[r.IntN(len(words))]) // no final newline
		}
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		expr := exprs[r.IntN(len(exprs))]
		mode := []string{modeContent, modeFiles, modeCount}[r.IntN(3)]
		s := &searcher{re: regexp.MustCompile(expr), mode: mode, before: r.IntN(3), after: r.IntN(3), lineNumbers: r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			s.capLines = r.IntN(6) + 2
		}
		s.lit, s.fold = requiredLiteral(expr)
		if s.fold {
			s.foldAlts, s.folder = foldAlternates(s.lit), newFoldFinder(s.lit)
		}
		if len(s.lit) == 0 {
			s.dfaProg = newDFAProg(expr)
		}
		w := newWorker(s)
		fast := w.search(context.Background(), path, "f")
		slow := w.searchStream(context.Background(), path, "f")
		if fast.matched != slow.matched || !reflect.DeepEqual(fast.chunks, slow.chunks) {
			t.Fatalf("case %d: %q on %q (mode %s, -B %d -A %d, cap %d):\nfast %+v\nslow %+v",
				i, expr, sb.String(), mode, s.before, s.after, s.capLines, fast, slow)
		}
	}
}
