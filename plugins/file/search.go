package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
)

// maxWholeFile is the largest file a search reads at once; a larger one is
// read line by line through a buffer.
const maxWholeFile = 32 << 20

// maxMultilineFile is the largest file a multiline search reads (a
// variable for tests).
var maxMultilineFile = 256 << 20

// searcher is one Grep call's compiled search, shared by its workers.
type searcher struct {
	re            *regexp.Regexp
	multiline     bool
	mode          string
	before, after int
	lineNumbers   bool
	// capLines, when positive, is how many output lines of one file are
	// enough (offset + head_limit + 2): the rest cannot be shown.
	capLines int

	lit      []byte // a literal every matching line holds
	fold     bool   // lit is lower-case ASCII, matched case-insensitively
	folder   *foldFinder
	foldAlts [][]byte     // non-ASCII characters that fold to a letter of lit
	dfaProg  *syntax.Prog // for a prefilter when there is no literal, or nil
}

// chunk is a piece of a file's content-mode output: the lines shown for a
// matching line (its before-context and itself), or one after-context line.
type chunk struct {
	match bool
	// sep says a new group of lines starts here: "--" goes before it when
	// context lines are on and output precedes it.
	sep   bool
	lines []string
}

// fileResult is what searching one file found.
type fileResult struct {
	matched    int // matching lines (files_with_matches: 0 or 1)
	chunks     []chunk
	unreadable bool
	tooLarge   bool // multiline: the file was not searched
}

// worker searches files one at a time with reusable buffers.
type worker struct {
	s     *searcher
	buf   []byte
	spans []span
	dfa   *dfa // built from s.dfaProg on first use
}

type span struct{ s, e int }

func newWorker(s *searcher) *worker { return &worker{s: s} }

// search searches the file at path, shown to the model as shown. Binary and
// unreadable files are skipped.
func (w *worker) search(ctx context.Context, path, shown string) fileResult {
	var res fileResult
	if ctx.Err() != nil {
		return res
	}
	limit := maxWholeFile
	if w.s.multiline {
		limit = maxMultilineFile
	}
	data, whole, err := readWhole(path, w.buf, limit)
	if cap(data) > cap(w.buf) {
		w.buf = data[:0]
	}
	if err != nil {
		res.unreadable = true
		return res
	}
	if !whole {
		if w.s.multiline {
			res.tooLarge = true
			return res
		}
		return w.searchStream(ctx, path, shown)
	}
	if sniffBinary(data[:min(len(data), sniffLen)], len(data) < sniffLen) {
		return res
	}
	if !w.s.multiline && len(data) > grepMaxLine && hasLongLine(data) {
		return w.searchStream(ctx, path, shown)
	}
	w.searchData(ctx, data, shown, &res)
	return res
}

// hasLongLine reports whether data has a line longer than grepMaxLine.
func hasLongLine(data []byte) bool {
	for len(data) > grepMaxLine {
		i := bytes.IndexByte(data[:grepMaxLine+1], '\n')
		if i < 0 {
			return true
		}
		data = data[i+1:]
	}
	return false
}

// searchData searches a whole file's content.
func (w *worker) searchData(ctx context.Context, data []byte, shown string, res *fileResult) {
	s := w.s
	m := w.matcher(data)
	if s.mode != modeContent {
		for pos := 0; pos <= len(data); {
			_, e, ok := m.next(pos)
			if !ok {
				break
			}
			res.matched++
			if s.mode == modeFiles || ctx.Err() != nil {
				return
			}
			pos = e + 1
		}
		return
	}
	k := &lineSink{s: s, shown: shown, res: res}
	lineNo, pos := 1, 0
	for pos <= len(data) {
		st, e, ok := m.next(pos)
		gapEnd := st
		if !ok {
			gapEnd = len(data)
		}
		if k.afterLeft > 0 || s.before > 0 {
			if k.gap(data, pos, gapEnd, lineNo) {
				return
			}
		}
		if !ok || ctx.Err() != nil {
			return
		}
		n := lineNo + bytes.Count(data[pos:st], []byte{'\n'})
		if k.add(n, trimCR(data[st:e]), true) {
			return
		}
		pos, lineNo = e+1, n+1
	}
}

func trimCR(b []byte) []byte { return bytes.TrimSuffix(b, []byte("\r")) }

// lineEnd returns the offset of the newline ending the line that holds
// offset i of data, or len(data) on the last line.
func lineEnd(data []byte, i int) int {
	j := bytes.IndexByte(data[i:], '\n')
	if j < 0 {
		return len(data)
	}
	return i + j
}

// matcher finds a file's matching lines.
type matcher struct {
	w       *worker
	data    []byte
	literal []byte      // the literal to look for in data, or nil
	folder  *foldFinder // or the folded literal to look for
	spans   []span      // multiline: the matching lines, in order
}

func (w *worker) matcher(data []byte) *matcher {
	s := w.s
	m := &matcher{w: w, data: data}
	if s.multiline {
		m.spans = w.multilineSpans(data)
		return m
	}
	if len(s.lit) == 0 {
		return m
	}
	if !s.fold {
		m.literal = s.lit
		return m
	}
	for _, alt := range s.foldAlts {
		if bytes.Contains(data, alt) {
			return m // a non-ASCII fold: every line goes to the regexp
		}
	}
	m.folder = s.folder
	return m
}

// next returns the first matching line that starts at or after pos (a line
// start): its start and end (the index of its "\n", or len(data)).
func (m *matcher) next(pos int) (start, end int, ok bool) {
	data := m.data
	if m.spans != nil || m.w.s.multiline {
		for len(m.spans) > 0 && m.spans[0].s < pos {
			m.spans = m.spans[1:]
		}
		if len(m.spans) == 0 {
			return 0, 0, false
		}
		sp := m.spans[0]
		m.spans = m.spans[1:]
		return sp.s, sp.e, true
	}
	re := m.w.s.re
	if m.literal != nil || m.folder != nil {
		for pos < len(data) {
			var i int
			if m.folder != nil {
				i = m.folder.index(data[pos:])
			} else {
				i = bytes.Index(data[pos:], m.literal)
			}
			if i < 0 {
				return 0, 0, false
			}
			h := pos + i
			st := pos + bytes.LastIndexByte(data[pos:h], '\n') + 1
			e := lineEnd(data, h)
			if re.Match(trimCR(data[st:e])) {
				return st, e, true
			}
			pos = e + 1
		}
		return 0, 0, false
	}
	if m.w.dfa == nil && m.w.s.dfaProg != nil {
		m.w.dfa = newDFA(m.w.s.dfaProg)
	}
	if d := m.w.dfa; d != nil && !d.failed {
		for pos < len(data) {
			st, e, ok := d.nextCandidate(data, pos)
			if d.failed {
				break // the dfa gave up: the regexp takes every line
			}
			if !ok {
				return 0, 0, false
			}
			if re.Match(trimCR(data[st:e])) {
				return st, e, true
			}
			pos = e + 1
		}
		if !d.failed {
			return 0, 0, false
		}
	}
	for pos < len(data) {
		e := lineEnd(data, pos)
		if re.Match(trimCR(data[pos:e])) {
			return pos, e, true
		}
		pos = e + 1
	}
	return 0, 0, false
}

// multilineSpans returns the lines that the matches of the multiline regexp
// touch, in order: a match spanning lines makes each of them a matching line.
func (w *worker) multilineSpans(data []byte) []span {
	spans := w.spans[:0]
	last := -1 // start of the last line added
	for _, loc := range w.s.re.FindAllIndex(data, -1) {
		ms, me := loc[0], loc[1]
		if ms == len(data) && (ms == 0 || data[ms-1] == '\n') {
			continue // the empty "line" after the final newline
		}
		if me > ms {
			me-- // the last byte of the match decides its last line
		}
		st := bytes.LastIndexByte(data[:ms], '\n') + 1
		for st <= me && st <= len(data) {
			e := lineEnd(data, st)
			if st > last {
				spans = append(spans, span{st, e})
				last = st
			}
			if e >= len(data) {
				break
			}
			st = e + 1
		}
	}
	w.spans = spans
	if spans == nil {
		return []span{}
	}
	return spans
}

// searchStream searches a file too large to read at once, line by line.
func (w *worker) searchStream(ctx context.Context, path, shown string) fileResult {
	var res fileResult
	f, err := os.Open(path)
	if err != nil {
		res.unreadable = true
		return res
	}
	defer f.Close()
	if binary, err := sniff(f); err != nil || binary {
		return res
	}
	br := bufio.NewReaderSize(f, 64<<10)
	k := &lineSink{s: w.s, shown: shown, res: &res}
	for n := 1; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return res
		}
		raw, _, err := readLine(br, grepMaxLine)
		if len(raw) == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				res.unreadable = true
			}
			return res
		}
		raw = trimCR(raw)
		match := w.s.re.Match(raw)
		if !match && w.s.mode != modeContent {
			continue
		}
		if k.add(n, raw, match) {
			return res
		}
	}
}

// lineSink turns a file's lines into its result, with context lines and
// group separators in content mode. It is fed every matching line and at
// least the non-matching lines that can be shown as context.
type lineSink struct {
	s     *searcher
	shown string
	res   *fileResult

	ring      []ctxLine // the last s.before non-matching lines
	lastShown int       // the last line number shown
	afterLeft int       // after-context lines still to show
	outLines  int       // output lines (with separators) so far
}

type ctxLine struct {
	n    int
	text string
}

// add takes line n; it returns true when the file needs no more lines.
func (k *lineSink) add(n int, raw []byte, match bool) bool {
	s := k.s
	if !match {
		if s.mode != modeContent {
			return false
		}
		if k.afterLeft > 0 {
			k.afterLeft--
			k.lastShown = n
			k.res.chunks = append(k.res.chunks, chunk{lines: []string{k.format(n, string(raw), false)}})
			k.outLines++
			return k.full()
		}
		if s.before > 0 {
			if len(k.ring) == s.before {
				copy(k.ring, k.ring[1:])
				k.ring = k.ring[:len(k.ring)-1]
			}
			k.ring = append(k.ring, ctxLine{n, string(raw)})
		}
		return false
	}
	k.res.matched++
	switch s.mode {
	case modeFiles:
		return true
	case modeCount:
		return false
	}
	first := n
	if len(k.ring) > 0 {
		first = k.ring[0].n
	}
	c := chunk{match: true, sep: (k.lastShown == 0 || first > k.lastShown+1) && (s.before > 0 || s.after > 0)}
	c.lines = make([]string, 0, len(k.ring)+1)
	for _, r := range k.ring {
		c.lines = append(c.lines, k.format(r.n, r.text, false))
	}
	c.lines = append(c.lines, k.format(n, string(raw), true))
	k.ring = k.ring[:0]
	k.lastShown, k.afterLeft = n, s.after
	k.res.chunks = append(k.res.chunks, c)
	k.outLines += len(c.lines)
	if c.sep {
		k.outLines++
	}
	return k.full()
}

func (k *lineSink) full() bool { return k.s.capLines > 0 && k.outLines >= k.s.capLines }

// gap feeds the non-matching lines in data[from:to] (whole lines, the
// first numbered n) that can be shown: the first ones while after-context
// is due, and the last s.before ones.
func (k *lineSink) gap(data []byte, from, to, n int) bool {
	if from >= to {
		return false
	}
	p := from
	for k.afterLeft > 0 && p < to {
		e := to
		if j := bytes.IndexByte(data[p:to], '\n'); j >= 0 {
			e = p + j
		}
		if k.add(n, trimCR(data[p:e]), false) {
			return true
		}
		n++
		p = e + 1
	}
	if k.s.before == 0 || p >= to {
		return false
	}
	// The last s.before lines of data[p:to], found from the end.
	total := bytes.Count(data[p:to], []byte{'\n'})
	if data[to-1] != '\n' {
		total++ // a last line without a newline, at the end of the file
	}
	type bounds struct{ s, e int }
	var tail []bounds
	q := to
	for len(tail) < k.s.before && q > p {
		e := q
		if q == to && data[to-1] != '\n' {
			e = to
		} else {
			e = q - 1
		}
		st := p + bytes.LastIndexByte(data[p:e], '\n') + 1
		tail = append(tail, bounds{st, e})
		q = st
	}
	first := n + total - len(tail)
	for i := len(tail) - 1; i >= 0; i-- {
		if k.add(first, trimCR(data[tail[i].s:tail[i].e]), false) {
			return true
		}
		first++
	}
	return false
}

// format renders an output line: path:N:text for a match, path-N-text for
// context, without N when line numbers are off.
func (k *lineSink) format(n int, text string, match bool) string {
	mark := "-"
	if match {
		mark = ":"
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if k.s.lineNumbers {
		return k.shown + mark + strconv.Itoa(n) + mark + text
	}
	return k.shown + mark + text
}
