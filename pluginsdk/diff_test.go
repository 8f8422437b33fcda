package pluginsdk_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// numbered is n lines "line 1\n" ... "line n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// replaceAt replaces each of the given substrings (each occurring once, in
// order) and returns the new text with the changed places.
func replaceAt(t *testing.T, old string, pairs ...string) (string, []pluginsdk.DiffChange) {
	t.Helper()
	var b strings.Builder
	var changes []pluginsdk.DiffChange
	pos := 0
	for i := 0; i < len(pairs); i += 2 {
		j := strings.Index(old[pos:], pairs[i])
		if j < 0 {
			t.Fatalf("%q not found after %d", pairs[i], pos)
		}
		b.WriteString(old[pos : pos+j])
		off := pos + j
		newOff := b.Len()
		b.WriteString(pairs[i+1])
		changes = append(changes, pluginsdk.DiffChange{OldOff: int64(off), OldEnd: int64(off + len(pairs[i])),
			NewOff: int64(newOff), NewEnd: int64(newOff + len(pairs[i+1]))})
		pos = off + len(pairs[i])
	}
	b.WriteString(old[pos:])
	return b.String(), changes
}

func diffChanges(t *testing.T, old, new string, changes []pluginsdk.DiffChange, more bool) (pluginsdk.BoundedDiff, []pluginsdk.DiffBlock) {
	t.Helper()
	d, err := pluginsdk.DiffChanges("f.txt", pluginsdk.DiffSide{R: strings.NewReader(old), Size: int64(len(old))},
		pluginsdk.DiffSide{R: strings.NewReader(new), Size: int64(len(new))}, changes, more)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []pluginsdk.DiffBlock
	size := 0
	for _, b := range d.Blocks {
		db := b.Data.(pluginsdk.DiffBlock)
		if b.Kind != "diff" || db.Path != "f.txt" {
			t.Fatalf("block %+v", b)
		}
		size += len(db.OldText) + len(db.NewText)
		blocks = append(blocks, db)
	}
	if size > pluginsdk.MaxDiffBytes {
		t.Fatalf("diff text is %d bytes, over %d", size, pluginsdk.MaxDiffBytes)
	}
	if d.Note != blocks[len(blocks)-1].Note {
		t.Fatalf("note %q is not the last block's (%q)", d.Note, blocks[len(blocks)-1].Note)
	}
	return d, blocks
}

func TestDiffChanges(t *testing.T) {
	big := numbered(100_000)
	tests := []struct {
		name    string
		old     string
		pairs   []string
		more    bool
		blocks  []pluginsdk.DiffBlock // without Path and Note
		note    string
		partial bool
	}{
		{"small texts are sent whole", "a\nb\nc\n", []string{"b", "B"}, false,
			[]pluginsdk.DiffBlock{{OldText: "a\nb\nc\n", NewText: "a\nB\nc\n"}}, "", false},
		{"one change: its lines with three lines of context, the rest elided", big, []string{"line 50000\n", "line fifty thousand\n"}, false,
			[]pluginsdk.DiffBlock{{OldStart: 49997, NewStart: 49997,
				OldText: "line 49997\nline 49998\nline 49999\nline 50000\nline 50001\nline 50002\nline 50003\n",
				NewText: "line 49997\nline 49998\nline 49999\nline fifty thousand\nline 50001\nline 50002\nline 50003\n"}},
			"⋯ 99,993 unchanged lines not shown ⋯", false},
		{"a change inside a line shows the whole line", big, []string{"ne 70000", "ne 7e4"}, false,
			[]pluginsdk.DiffBlock{{OldStart: 69997, NewStart: 69997,
				OldText: "line 69997\nline 69998\nline 69999\nline 70000\nline 70001\nline 70002\nline 70003\n",
				NewText: "line 69997\nline 69998\nline 69999\nline 7e4\nline 70001\nline 70002\nline 70003\n"}},
			"⋯ 99,993 unchanged lines not shown ⋯", false},
		{"changes far apart are separate hunks, new line numbers shifted", big,
			[]string{"line 10\n", "line 10\nadded\n", "line 90000\n", ""}, false,
			[]pluginsdk.DiffBlock{
				{OldStart: 7, NewStart: 7, OldText: "line 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\n",
					NewText: "line 7\nline 8\nline 9\nline 10\nadded\nline 11\nline 12\nline 13\n"},
				{OldStart: 89997, NewStart: 89998, OldText: "line 89997\nline 89998\nline 89999\nline 90000\nline 90001\nline 90002\nline 90003\n",
					NewText: "line 89997\nline 89998\nline 89999\nline 90001\nline 90002\nline 90003\n"}},
			"⋯ 99,986 unchanged lines not shown ⋯", false},
		{"changes close together share a hunk", big, []string{"line 500\n", "five hundred\n", "line 505\n", "five hundred five\n"}, false,
			[]pluginsdk.DiffBlock{{OldStart: 497, NewStart: 497,
				OldText: "line 497\nline 498\nline 499\nline 500\nline 501\nline 502\nline 503\nline 504\nline 505\nline 506\nline 507\nline 508\n",
				NewText: "line 497\nline 498\nline 499\nfive hundred\nline 501\nline 502\nline 503\nline 504\nfive hundred five\nline 506\nline 507\nline 508\n"}},
			"⋯ 99,988 unchanged lines not shown ⋯", false},
		{"the start and end of the file bound the context", numbered(5000), []string{"line 1\n", "first\n", "line 5000\n", "last\n"}, false,
			[]pluginsdk.DiffBlock{
				{OldStart: 1, NewStart: 1, OldText: "line 1\nline 2\nline 3\nline 4\n", NewText: "first\nline 2\nline 3\nline 4\n"},
				{OldStart: 4997, NewStart: 4997, OldText: "line 4997\nline 4998\nline 4999\nline 5000\n", NewText: "line 4997\nline 4998\nline 4999\nlast\n"}},
			"⋯ 4,992 unchanged lines not shown ⋯", false},
		{"changes the caller did not keep are announced", big, []string{"line 3000\n", "x\n"}, true,
			[]pluginsdk.DiffBlock{{OldStart: 2997, NewStart: 2997,
				OldText: "line 2997\nline 2998\nline 2999\nline 3000\nline 3001\nline 3002\nline 3003\n",
				NewText: "line 2997\nline 2998\nline 2999\nx\nline 3001\nline 3002\nline 3003\n"}},
			"⋯ Not the whole edit: later changes are not shown; 99,993 lines of the old file not shown ⋯", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			new, changes := replaceAt(t, tt.old, tt.pairs...)
			d, blocks := diffChanges(t, tt.old, new, changes, tt.more)
			if d.Partial != tt.partial || d.Note != tt.note {
				t.Errorf("partial %v note %q, want %v %q", d.Partial, d.Note, tt.partial, tt.note)
			}
			if len(blocks) != len(tt.blocks) {
				t.Fatalf("%d blocks, want %d: %+v", len(blocks), len(tt.blocks), blocks)
			}
			for i, b := range blocks {
				b.Path, b.Note = "", ""
				if b != tt.blocks[i] {
					t.Errorf("block %d:\n got %+v\nwant %+v", i, b, tt.blocks[i])
				}
			}
		})
	}
}

// TestDiffChangesOneLongLine: a one-word change in a 3 MB one-line JSON text
// shows the word with at most 1 KiB of the line each side, cut with "…".
func TestDiffChangesOneLongLine(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"items": [`)
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, `{"id": %d, "name": "item %d"}, `, i, i)
	}
	b.WriteString(`{"id": -1, "name": "needle"}]}`)
	old := b.String()
	new, changes := replaceAt(t, old, `"item 40000"`, `"renamed"`)
	d, blocks := diffChanges(t, old, new, changes, false)
	if len(blocks) != 1 || d.Partial || d.Note != "" {
		t.Fatalf("blocks %d partial %v note %q", len(blocks), d.Partial, d.Note)
	}
	h := blocks[0]
	if h.OldStart != 1 || h.NewStart != 1 || !strings.HasPrefix(h.OldText, "…") || !strings.HasSuffix(h.NewText, "…") ||
		!strings.Contains(h.OldText, `"item 40000"`) || !strings.Contains(h.NewText, `"renamed"`) ||
		len(h.OldText) > 2<<10+len(`"item 40000"`)+2*len("…") {
		t.Fatalf("hunk %+v", h)
	}
	if strings.Replace(h.OldText, `"item 40000"`, `"renamed"`, 1) != h.NewText {
		t.Fatalf("the two sides differ beyond the change:\n%s\n%s", h.OldText, h.NewText)
	}
}

// TestDiffChangesCapped: a replace_all with many sites shows at most 50
// hunks within MaxDiffBytes, and a huge change keeps its two ends.
func TestDiffChangesCapped(t *testing.T) {
	t.Run("many sites", func(t *testing.T) {
		old := numbered(100_000)
		var pairs []string
		for i := 1; i <= 100_000; i += 100 {
			pairs = append(pairs, fmt.Sprintf("line %d\n", i), fmt.Sprintf("LINE %d\n", i))
		}
		new, changes := replaceAt(t, old, pairs...)
		d, blocks := diffChanges(t, old, new, changes, false)
		if len(blocks) != 50 || !d.Partial ||
			d.Note != "⋯ Not the whole edit: 950 changed places are not shown; 99,653 lines of the old file not shown ⋯" {
			t.Fatalf("%d blocks, partial %v, note %q", len(blocks), d.Partial, d.Note)
		}
		if blocks[49].OldStart != 4898 || !strings.Contains(blocks[49].NewText, "LINE 4901\n") {
			t.Fatalf("last block %+v", blocks[49])
		}
	})
	t.Run("huge change", func(t *testing.T) {
		old := numbered(200_000) // 2.2 MB
		new := "header\n" + strings.ReplaceAll(old, "line", "LINE")
		d, blocks := diffChanges(t, old, new, []pluginsdk.DiffChange{{OldOff: 0, OldEnd: int64(len(old)), NewOff: 0, NewEnd: int64(len(new))}}, false)
		if len(blocks) != 1 || !d.Partial || d.Note != "⋯ Not the whole edit: 1 hunk is cut where marked ⋯" {
			t.Fatalf("%d blocks, partial %v, note %q", len(blocks), d.Partial, d.Note)
		}
		h := blocks[0]
		if !strings.HasPrefix(h.OldText, "line 1\nline 2\n") || !strings.HasSuffix(h.OldText, "line 200000\n") ||
			!strings.HasPrefix(h.NewText, "header\nLINE 1\n") || !strings.HasSuffix(h.NewText, "LINE 200000\n") ||
			!strings.Contains(h.OldText, " bytes not shown ⋯\n") || len(h.OldText) > 9<<10 {
			t.Fatalf("hunk old %d bytes: %.200q … %.200q", len(h.OldText), h.OldText, h.OldText[len(h.OldText)-200:])
		}
	})
}

// TestDiffBounded: Diff of large texts is one hunk, not the whole texts.
func TestDiffBounded(t *testing.T) {
	old := numbered(50_000)
	new := strings.Replace(old, "line 25000\n", "changed\n", 1)
	b := pluginsdk.Diff("f.txt", old, new).Data.(pluginsdk.DiffBlock)
	if b.OldStart != 24997 || b.NewStart != 24997 || !strings.Contains(b.NewText, "changed\n") ||
		len(b.OldText)+len(b.NewText) > 1<<10 || b.Note != "⋯ 49,993 unchanged lines not shown ⋯" {
		t.Fatalf("diff %+v", b)
	}
	small := pluginsdk.Diff("f.txt", "x", "y").Data.(pluginsdk.DiffBlock)
	if small != (pluginsdk.DiffBlock{Path: "f.txt", OldText: "x", NewText: "y"}) {
		t.Fatalf("small diff %+v", small)
	}
}
