package pluginsdk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// The bounds of a diff display block. An edit's diff never carries more
// than MaxDiffBytes of old and new text in all, whatever the size of the
// file: texts up to wholeDiffBytes together are sent whole (a front end
// diffs them itself); larger ones as hunks around the changes.
const (
	// MaxDiffBytes caps the text of one edit's diff: the old and new text
	// of every hunk together, before JSON escaping.
	MaxDiffBytes = 64 << 10
	// DiffContextLines is the number of unchanged lines kept on each side
	// of a change in a hunk.
	DiffContextLines = 3

	wholeDiffBytes   = 32 << 10
	diffContextBytes = 1 << 10 // the most context kept on one side of a change
	diffSideBytes    = 8 << 10 // the most text of one side of one hunk
	maxDiffHunks     = 50
	elidedMark       = "…" // where context was cut inside a line
)

// DiffBlock is the display block of a file edit: Kimi's diff block. A small
// edit carries the whole old and new texts; a larger one carries one block
// per hunk, where OldStart and NewStart are the line numbers of the first
// line of OldText and NewText, and the last block's Note says what the
// hunks leave out.
type DiffBlock struct {
	Path     string `json:"path"`
	OldText  string `json:"old_text"`
	NewText  string `json:"new_text"`
	OldStart int    `json:"old_start,omitempty"`
	NewStart int    `json:"new_start,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Diff returns a "diff" display block of a change from oldText to newText,
// within MaxDiffBytes: the whole texts when they are small, else one hunk
// around the part that differs (the texts' common start and end left out).
func Diff(path, oldText, newText string) DisplayBlock {
	if len(oldText)+len(newText) <= wholeDiffBytes {
		return DisplayBlock{Kind: "diff", Data: DiffBlock{Path: path, OldText: oldText, NewText: newText}}
	}
	p := commonPrefix(oldText, newText)
	s := commonSuffix(oldText[p:], newText[p:])
	change := DiffChange{OldOff: int64(p), OldEnd: int64(len(oldText) - s), NewOff: int64(p), NewEnd: int64(len(newText) - s)}
	d, err := DiffChanges(path, DiffSide{strings.NewReader(oldText), int64(len(oldText))},
		DiffSide{strings.NewReader(newText), int64(len(newText))}, []DiffChange{change}, false)
	if err != nil || len(d.Blocks) == 0 {
		return DisplayBlock{Kind: "diff", Data: DiffBlock{Path: path, Note: "The change is too large to show."}}
	}
	return d.Blocks[0]
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// DiffChange is one changed place of an edit: bytes [OldOff, OldEnd) of the
// old text became bytes [NewOff, NewEnd) of the new one.
type DiffChange struct {
	OldOff, OldEnd, NewOff, NewEnd int64
}

// DiffSide is one side of a diff: its content, read in windows, and size.
type DiffSide struct {
	R    io.ReaderAt
	Size int64
}

// BoundedDiff is an edit's diff within MaxDiffBytes.
type BoundedDiff struct {
	Blocks []DisplayBlock
	// Partial says the blocks do not show every change in full (a hunk
	// cut in its middle, or changes left out); Note says what.
	Partial bool
	// Note says what the blocks leave out ("" for nothing); it is also
	// the last block's Note.
	Note string
}

// DiffChanges returns the diff of an edit from the places it changed,
// reading only windows of the two sides (each may be far larger than
// memory) and, to number the lines, one pass over each. changes are in
// order and disjoint, and the bytes between them are the same on both
// sides; more says the edit changed further places, after the last one
// listed, that the caller did not keep.
//
// Small sides (wholeDiffBytes together) give one block with both whole
// texts. Larger ones give a block per hunk: the changed lines with
// DiffContextLines of context each side (at most 1 KiB of it, cut inside a
// line with "…"), changes closer than that sharing a hunk. A side of a hunk
// over 8 KiB keeps its start and end around a line saying how much was
// left out; hunks stop at 50 or when MaxDiffBytes is reached.
func DiffChanges(path string, old, new DiffSide, changes []DiffChange, more bool) (BoundedDiff, error) {
	if old.Size+new.Size <= wholeDiffBytes && !more {
		o, err := readSpan(old.R, 0, old.Size)
		if err != nil {
			return BoundedDiff{}, err
		}
		n, err := readSpan(new.R, 0, new.Size)
		if err != nil {
			return BoundedDiff{}, err
		}
		return BoundedDiff{Blocks: []DisplayBlock{{Kind: "diff", Data: DiffBlock{Path: path, OldText: string(o), NewText: string(n)}}}}, nil
	}
	groups, err := groupChanges(old.R, changes)
	if err != nil {
		return BoundedDiff{}, err
	}
	var hunks []hunk
	budget, shownChanges, cut := MaxDiffBytes, 0, 0
	for _, g := range groups {
		if len(hunks) == maxDiffHunks {
			break
		}
		first, last := changes[g[0]], changes[g[1]-1]
		// The context stops at the neighbouring changes, shown or not.
		lo, hi := int64(0), old.Size
		if g[0] > 0 {
			lo = changes[g[0]-1].OldEnd
		}
		if g[1] < len(changes) {
			hi = changes[g[1]].OldOff
		}
		h, err := makeHunk(old, new, first, last, lo, hi)
		if err != nil {
			return BoundedDiff{}, err
		}
		if size := len(h.oldText) + len(h.newText); size > budget {
			break
		} else {
			budget -= size
		}
		if h.cut {
			cut++
		}
		shownChanges += g[1] - g[0]
		hunks = append(hunks, h)
	}
	total, err := numberLines(old, new, hunks)
	if err != nil {
		return BoundedDiff{}, err
	}
	d := BoundedDiff{Partial: cut > 0 || shownChanges < len(changes) || more}
	d.Note = diffNote(total, hunks, cut, len(changes)-shownChanges, more)
	for i, h := range hunks {
		b := DiffBlock{Path: path, OldText: h.oldText, NewText: h.newText, OldStart: h.oldLine, NewStart: h.newLine}
		if i == len(hunks)-1 {
			b.Note = d.Note
		}
		d.Blocks = append(d.Blocks, DisplayBlock{Kind: "diff", Data: b})
	}
	if len(hunks) == 0 {
		d.Blocks = []DisplayBlock{{Kind: "diff", Data: DiffBlock{Path: path, Note: d.Note}}}
	}
	return d, nil
}

// hunk is one hunk: the spans [oldOff, oldEnd) and [newOff, newEnd) shown,
// their texts (maybe cut) and first line numbers.
type hunk struct {
	oldOff, oldEnd, newOff, newEnd int64
	oldText, newText               string
	oldLine, newLine               int
	oldLines                       int // the lines of the old side shown
	cut                            bool
}

// groupChanges groups the changes that share a hunk: those whose gap has at
// most 2*DiffContextLines+1 line breaks within 2*diffContextBytes. Each
// group is a range [from, to) of changes.
func groupChanges(r io.ReaderAt, changes []DiffChange) ([][2]int, error) {
	var groups [][2]int
	for i := range changes {
		if i > 0 {
			gap := changes[i].OldOff - changes[i-1].OldEnd
			if gap <= 2*diffContextBytes {
				b, err := readSpan(r, changes[i-1].OldEnd, changes[i].OldOff)
				if err != nil {
					return nil, err
				}
				if bytes.Count(b, []byte("\n")) <= 2*DiffContextLines+1 {
					groups[len(groups)-1][1] = i + 1
					continue
				}
			}
		}
		if len(groups) > maxDiffHunks {
			break
		}
		groups = append(groups, [2]int{i, i + 1})
	}
	return groups, nil
}

// makeHunk builds the hunk from change first to change last, its context
// taken from the old side between lo and hi (the neighbouring hunks'
// changes); the same bytes surround the new side.
func makeHunk(old, new DiffSide, first, last DiffChange, lo, hi int64) (hunk, error) {
	start, cutStart, err := contextStart(old.R, first.OldOff, lo)
	if err != nil {
		return hunk{}, err
	}
	end, cutEnd, err := contextEnd(old.R, last.OldEnd, hi)
	if err != nil {
		return hunk{}, err
	}
	h := hunk{oldOff: start, oldEnd: end, newOff: first.NewOff - (first.OldOff - start), newEnd: last.NewEnd + (end - last.OldEnd)}
	var oldCut, newCut bool
	if h.oldText, oldCut, err = sideText(old.R, h.oldOff, h.oldEnd); err != nil {
		return hunk{}, err
	}
	if h.newText, newCut, err = sideText(new.R, h.newOff, h.newEnd); err != nil {
		return hunk{}, err
	}
	h.cut = oldCut || newCut
	if cutStart {
		h.oldText, h.newText = elidedMark+h.oldText, elidedMark+h.newText
	}
	if cutEnd {
		h.oldText, h.newText = h.oldText+elidedMark, h.newText+elidedMark
	}
	return h, nil
}

// contextStart is where the context before off begins: DiffContextLines
// whole lines before off's line, not before lo, and at most
// diffContextBytes before off; cut says it is inside a line.
func contextStart(r io.ReaderAt, off, lo int64) (int64, bool, error) {
	from := max(lo, off-diffContextBytes)
	b, err := readSpan(r, from, off)
	if err != nil {
		return 0, false, err
	}
	i := len(b)
	for range DiffContextLines + 1 {
		j := bytes.LastIndexByte(b[:i], '\n')
		if j < 0 {
			i = -1
			break
		}
		i = j
	}
	if i >= 0 {
		return from + int64(i) + 1, false, nil
	}
	if from == lo {
		// The start of the file, or the end of the previous change.
		return from, from > 0 && !bytes.Equal(mustByteBefore(r, from), []byte("\n")), nil
	}
	k := 0
	for k < len(b) && !utf8.RuneStart(b[k]) {
		k++
	}
	return from + int64(k), true, nil
}

// contextEnd is where the context after end stops: after the line end
// closes end's line and DiffContextLines more lines, not past hi, and at
// most diffContextBytes after end; cut says it is inside a line.
func contextEnd(r io.ReaderAt, end, hi int64) (int64, bool, error) {
	to := min(hi, end+diffContextBytes)
	b, err := readSpan(r, end, to)
	if err != nil {
		return 0, false, err
	}
	need := DiffContextLines + 1
	if end > 0 && bytes.Equal(mustByteBefore(r, end), []byte("\n")) {
		need-- // end is at the start of a line: no line to close
	}
	i := 0
	for range need {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			i = -1
			break
		}
		i += j + 1
	}
	if i >= 0 {
		return end + int64(i), false, nil
	}
	if to == hi {
		// The end of the file, or the start of the next change.
		return to, len(b) > 0 && b[len(b)-1] != '\n' && !atEnd(r, to), nil
	}
	return end + int64(len(trimPartialRune(b))), true, nil
}

// atEnd reports whether off is the end of r.
func atEnd(r io.ReaderAt, off int64) bool {
	var b [1]byte
	n, _ := r.ReadAt(b[:], off)
	return n == 0
}

// trimPartialRune drops an incomplete character from the end of b.
func trimPartialRune(b []byte) []byte {
	k := len(b) - 1
	for k > 0 && !utf8.RuneStart(b[k]) {
		k--
	}
	if k >= 0 && !utf8.FullRune(b[k:]) {
		return b[:k]
	}
	return b
}

// mustByteBefore returns the byte before off (nothing at an error).
func mustByteBefore(r io.ReaderAt, off int64) []byte {
	b, err := readSpan(r, off-1, off)
	if err != nil {
		return nil
	}
	return b
}

// sideText is the text of [from, to), whole up to diffSideBytes; a longer
// span keeps its first and last lines around a line saying how much was
// left out (cut).
func sideText(r io.ReaderAt, from, to int64) (string, bool, error) {
	if to-from <= diffSideBytes {
		b, err := readSpan(r, from, to)
		return strings.ToValidUTF8(string(b), "\uFFFD"), false, err
	}
	half := int64(diffSideBytes / 2)
	head, err := readSpan(r, from, from+half)
	if err != nil {
		return "", false, err
	}
	tail, err := readSpan(r, to-half, to)
	if err != nil {
		return "", false, err
	}
	// Whole lines where a line break is near, else whole characters.
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	} else {
		head = trimPartialRune(head)
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	} else {
		k := 0
		for k < len(tail) && !utf8.RuneStart(tail[k]) {
			k++
		}
		tail = tail[k:]
	}
	left := to - from - int64(len(head)) - int64(len(tail))
	var sb strings.Builder
	sb.WriteString(strings.ToValidUTF8(string(head), "\uFFFD"))
	if len(head) > 0 && head[len(head)-1] != '\n' {
		sb.WriteString("\n")
	}
	fmt.Fprintf(&sb, "⋯ %s bytes not shown ⋯\n", groupDigits(left))
	sb.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	return sb.String(), true, nil
}

// numberLines sets each hunk's first line numbers and the old lines it
// shows, and returns the old side's number of lines, in one pass over the
// old side and one over the new side up to its last hunk.
func numberLines(old, new DiffSide, hunks []hunk) (int, error) {
	oldMarks := make([]int64, 0, 2*len(hunks)+1)
	newMarks := make([]int64, 0, len(hunks))
	for _, h := range hunks {
		oldMarks = append(oldMarks, h.oldOff, h.oldEnd)
		newMarks = append(newMarks, h.newOff)
	}
	oldMarks = append(oldMarks, old.Size)
	oldCounts, err := countLinesAt(old.R, oldMarks)
	if err != nil {
		return 0, err
	}
	newCounts, err := countLinesAt(new.R, newMarks)
	if err != nil {
		return 0, err
	}
	for i := range hunks {
		hunks[i].oldLine = oldCounts[2*i] + 1
		hunks[i].newLine = newCounts[i] + 1
		hunks[i].oldLines = oldCounts[2*i+1] - oldCounts[2*i]
		if endsInsideLine(old.R, hunks[i].oldOff, hunks[i].oldEnd) {
			hunks[i].oldLines++ // a last line without its line break
		}
	}
	total := oldCounts[len(oldCounts)-1]
	if endsInsideLine(old.R, 0, old.Size) {
		total++
	}
	return total, nil
}

// endsInsideLine reports whether the non-empty span [from, to) ends
// without a line break.
func endsInsideLine(r io.ReaderAt, from, to int64) bool {
	return to > from && !bytes.Equal(mustByteBefore(r, to), []byte("\n"))
}

// countLinesAt returns the number of line breaks before each offset (in
// ascending order), reading r once up to the last of them.
func countLinesAt(r io.ReaderAt, offs []int64) ([]int, error) {
	counts := make([]int, len(offs))
	buf := make([]byte, 256<<10)
	pos, n := int64(0), 0
	for i, off := range offs {
		for pos < off {
			k, err := r.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
			n += bytes.Count(buf[:k], []byte("\n"))
			pos += int64(k)
			if err != nil && (!errors.Is(err, io.EOF) || pos < off) {
				return nil, fmt.Errorf("reading at %d: %w", pos, err)
			}
		}
		counts[i] = n
	}
	return counts, nil
}

// diffNote says what the hunks leave out.
func diffNote(total int, hunks []hunk, cut, dropped int, more bool) string {
	var parts []string
	if cut > 0 {
		parts = append(parts, fmt.Sprintf("%s cut where marked", plural(cut, "hunk is", "hunks are")))
	}
	switch {
	case dropped > 0 && more:
		parts = append(parts, fmt.Sprintf("%s and more after them are not shown", plural(dropped, "changed place", "changed places")))
	case dropped > 0:
		parts = append(parts, fmt.Sprintf("%s not shown", plural(dropped, "changed place is", "changed places are")))
	case more:
		parts = append(parts, "later changes are not shown")
	}
	shown := 0
	for _, h := range hunks {
		shown += h.oldLines
	}
	hidden := max(total-shown, 0)
	if len(parts) == 0 {
		if hidden == 0 {
			return ""
		}
		return fmt.Sprintf("⋯ %s not shown ⋯", plural(hidden, "unchanged line", "unchanged lines"))
	}
	s := "⋯ Not the whole edit: " + strings.Join(parts, "; ")
	if hidden > 0 {
		s += fmt.Sprintf("; %s of the old file not shown", plural(hidden, "line", "lines"))
	}
	return s + " ⋯"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return groupDigits(int64(n)) + " " + many
}

// groupDigits writes n with commas between groups of three digits.
func groupDigits(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// readSpan reads bytes [from, to) of r.
func readSpan(r io.ReaderAt, from, to int64) ([]byte, error) {
	if to <= from {
		return nil, nil
	}
	b := make([]byte, to-from)
	k, err := r.ReadAt(b, from)
	if k == len(b) {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return b[:k], fmt.Errorf("reading at %d: %w", from+int64(k), err)
}
