package file

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// TestReplaceStream checks the streaming replacement against strings.Count
// and strings.ReplaceAll on texts whose occurrences overlap each other and
// straddle the boundaries of the read window.
func TestReplaceStream(t *testing.T) {
	long := strings.Repeat("abcab", (3*streamChunk)/5+7)
	tests := []struct {
		name, text, old, repl string
	}{
		{"overlapping occurrences across windows", long, "abcababcab", "X"},
		{"one-byte old", long, "b", "bb"},
		{"old longer than the text", "abc", "abcd", "x"},
		{"no occurrence", long, "zz", "y"},
		{"occurrence at the very end", long + "END", "bEND", "!"},
		{"deletion", long, "ca", ""},
		{"crlf only", "a\r\nb", "\r\n", "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			var offs []int64
			n, crlf, err := replaceStream(context.Background(), iotest.HalfReader(strings.NewReader(tt.text)), &out,
				[]byte(tt.old), []byte(tt.repl), func(o int64) { offs = append(offs, o) })
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Count(tt.text, tt.old); n != want || len(offs) != want {
				t.Fatalf("count %d (%d offsets), want %d", n, len(offs), want)
			}
			if out.String() != strings.ReplaceAll(tt.text, tt.old, tt.repl) {
				t.Fatalf("output differs from strings.ReplaceAll (%d bytes vs %d)", out.Len(), len(strings.ReplaceAll(tt.text, tt.old, tt.repl)))
			}
			for _, o := range offs {
				if tt.text[o:o+int64(len(tt.old))] != tt.old {
					t.Fatalf("offset %d is not an occurrence", o)
				}
			}
			if crlf != strings.Contains(tt.text, "\r\n") {
				t.Fatalf("crlf = %v", crlf)
			}
		})
	}
}

func TestReplaceStreamErrors(t *testing.T) {
	boom := errors.New("boom")
	if _, _, err := replaceStream(context.Background(), iotest.ErrReader(boom), nil, []byte("a"), nil, nil); !errors.Is(err, boom) {
		t.Errorf("read error: %v", err)
	}
	if _, _, err := replaceStream(context.Background(), strings.NewReader("xax"), failWriter{boom}, []byte("a"), []byte("b"), nil); !errors.Is(err, boom) {
		t.Errorf("write error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := replaceStream(ctx, strings.NewReader("xax"), nil, []byte("a"), nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

// TestApplyEditsChanges applies random lists of edits to a file and checks
// the result against strings.Replace, and that the changed places the diff
// is built from account for every difference: the bytes between them are
// the same in the old and the new file.
func TestApplyEditsChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for round := range 60 {
		var b strings.Builder
		for b.Len() < 8<<10 {
			b.WriteByte("abcd\n"[rng.IntN(5)])
		}
		text := b.String()
		path := filepath.Join(dir, "f.txt")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		want := text
		var edits Edits
		for range 1 + rng.IntN(4) {
			i := rng.IntN(len(want) - 8)
			e := Edit{Old: want[i : i+1+rng.IntN(6)], New: strings.Repeat("XY\n", rng.IntN(3)), ReplaceAll: true}
			if rng.IntN(3) == 0 {
				e.New = want[i : i+rng.IntN(3)] // maybe creates occurrences of a later edit
			}
			edits = append(edits, e)
			want = strings.ReplaceAll(want, e.Old, e.New)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ed, msg, err := applyEdits(context.Background(), f, int64(len(text)), path, edits, "f.txt")
		if err != nil || msg != "" {
			t.Fatalf("round %d: %q %v", round, msg, err)
		}
		got, err := os.ReadFile(ed.tmp.Name())
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("round %d: content differs", round)
		}
		if ed.more {
			// Only the first places are kept: they rebuild the start.
			if len(ed.changes) == 0 || len(ed.changes) > maxTrackedChanges {
				t.Fatalf("round %d: %d places and more", round, len(ed.changes))
			}
			last := ed.changes[len(ed.changes)-1]
			checkChanges(t, text[:last.OldEnd], want[:last.NewEnd], ed.changes)
		} else {
			checkChanges(t, text, want, ed.changes)
		}
		ed.discard()
		_ = f.Close()
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".f.txt.tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// checkChanges checks that changes turn old into new: in order, disjoint,
// and the same bytes between them on both sides.
func checkChanges(t *testing.T, old, new string, changes []pluginsdk.DiffChange) {
	t.Helper()
	var b strings.Builder
	pos := int64(0)
	for i, c := range changes {
		if c.OldOff < pos || c.OldEnd < c.OldOff || c.NewEnd < c.NewOff {
			t.Fatalf("change %d %+v out of order", i, c)
		}
		b.WriteString(old[pos:c.OldOff])
		if int64(b.Len()) != c.NewOff {
			t.Fatalf("change %d %+v: new offset %d expected", i, c, b.Len())
		}
		b.WriteString(new[c.NewOff:c.NewEnd])
		pos = c.OldEnd
	}
	b.WriteString(old[pos:])
	if b.String() != new {
		t.Fatalf("the changes do not rebuild the new text")
	}
}

// TestApplyEditsManyPlaces: past maxTrackedChanges places the diff is told
// there are more, and the places kept are the first ones.
func TestApplyEditsManyPlaces(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("x = 1\n", 5000)
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ed, msg, err := applyEdits(context.Background(), f, int64(len(text)), path,
		Edits{{Old: "1", New: "22", ReplaceAll: true}, {Old: "x = 22\nx", New: "y", ReplaceAll: true}}, "f.txt")
	if err != nil || msg != "" {
		t.Fatal(msg, err)
	}
	defer ed.discard()
	if !ed.more || len(ed.changes) != maxTrackedChanges || ed.replaced != 5000+2500 {
		t.Fatalf("more %v, %d places, %d replaced", ed.more, len(ed.changes), ed.replaced)
	}
	want := strings.ReplaceAll(strings.ReplaceAll(text, "1", "22"), "x = 22\nx", "y")
	last := ed.changes[len(ed.changes)-1]
	checkChanges(t, text[:last.OldEnd], want[:last.NewEnd], ed.changes)
}

// TestApplyEditsFailures: a failure to write the temporary file or a
// cancelled call is an error for the call, and leaves no temporary file.
func TestApplyEditsFailures(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("one two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		target string
		want   error
	}{
		{"the directory is gone", context.Background(), filepath.Join(dir, "gone", "f.txt"), os.ErrNotExist},
		{"cancelled", cancelled, path, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, msg, err := applyEdits(tt.ctx, f, 8, tt.target, Edits{{Old: "one", New: "1"}}, "f.txt")
			if msg != "" || !errors.Is(err, tt.want) {
				t.Fatalf("msg %q, err %v", msg, err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Fatalf("left behind: %v", entries)
			}
		})
	}
	// Through the tool: the error names the file.
	tool := &StrReplaceFile{ws: workspace{dir: dir}, approval: approveAll{}}
	r := tool.Call(cancelled, []byte(`{"path": "f.txt", "edit": {"old": "one", "new": "1"}}`))
	if r.Kind != pluginsdk.KindError || r.Message != "Cannot edit `f.txt`: context canceled" {
		t.Fatalf("got %+v", r)
	}
}

// TestWriteFileReadFailures: a failure to read the old content for the diff
// is an error naming the file.
func TestWriteFileReadFailures(t *testing.T) {
	boom := errors.New("boom")
	if _, _, err := commonEnds(pluginsdk.DiffSide{R: failReaderAt{boom}, Size: 10}, "0123456789"); !errors.Is(err, boom) {
		t.Errorf("commonEnds: %v", err)
	}
	c := concatReaderAt{pluginsdk.DiffSide{R: strings.NewReader("abc"), Size: 3}, strings.NewReader("def")}
	buf := make([]byte, 4)
	if n, err := c.ReadAt(buf, 1); n != 4 || err != nil || string(buf) != "bcde" {
		t.Errorf("concat ReadAt = %d %v %q", n, err, buf)
	}
	if _, err := (concatReaderAt{pluginsdk.DiffSide{R: failReaderAt{boom}, Size: 3}, strings.NewReader("def")}).ReadAt(buf, 0); !errors.Is(err, boom) {
		t.Errorf("concat ReadAt error: %v", err)
	}
	if _, err := pluginsdk.DiffChanges("f", pluginsdk.DiffSide{R: failReaderAt{boom}, Size: 1 << 20}, pluginsdk.DiffSide{R: strings.NewReader("x"), Size: 1},
		[]pluginsdk.DiffChange{{OldOff: 0, OldEnd: 1 << 20, NewOff: 0, NewEnd: 1}}, false); !errors.Is(err, boom) {
		t.Errorf("DiffChanges: %v", err)
	}
}

type failReaderAt struct{ err error }

func (r failReaderAt) ReadAt([]byte, int64) (int, error) { return 0, r.err }

// approveAll approves every request.
type approveAll struct{}

func (approveAll) Request(context.Context, string, string, ...pluginsdk.DisplayBlock) (pluginsdk.Decision, error) {
	return pluginsdk.Decision{Approved: true}, nil
}
