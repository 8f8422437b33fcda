package main_test

import (
	"strconv"
	"strings"
)

// screen is what a terminal of rows x cols shows after the bytes it was
// fed: enough of a VT100 for the line editor and the printer (cursor
// moves, erasing, scrolling at the bottom, autowrap). Colours and modes are
// ignored; every character is one column wide. (The one terminal emulator
// module served, github.com/charmbracelet/x/vt, needs a newer
// charmbracelet/x/ansi than the Markdown renderer builds with.)
type screen struct {
	rows, cols int
	cells      [][]rune
	row, col   int
	wrapNext   bool // the last column was written: the next character wraps
	savedRow   int
	savedCol   int
	pending    []byte // an incomplete escape sequence or UTF-8 character
}

func newScreen(rows, cols int) *screen {
	s := &screen{rows: rows, cols: cols}
	s.cells = make([][]rune, rows)
	for i := range s.cells {
		s.cells[i] = blankRow(cols)
	}
	return s
}

func blankRow(cols int) []rune {
	r := make([]rune, cols)
	for i := range r {
		r[i] = ' '
	}
	return r
}

// Resize changes the screen's size as a terminal that does not reflow
// does: rows and columns are cut or added, and the screen scrolls up if
// the cursor's row is gone.
func (s *screen) Resize(rows, cols int) {
	if shift := s.row - (rows - 1); shift > 0 {
		s.cells = s.cells[shift:]
		s.row -= shift
	}
	cells := make([][]rune, rows)
	for i := range cells {
		cells[i] = blankRow(cols)
		if i < len(s.cells) {
			copy(cells[i], s.cells[i])
		}
	}
	s.rows, s.cols, s.cells = rows, cols, cells
	s.col = min(s.col, cols-1)
	s.wrapNext = false
}

// Lines is the screen, one string a row, trailing blanks dropped.
func (s *screen) Lines() []string {
	out := make([]string, s.rows)
	for i, r := range s.cells {
		out[i] = strings.TrimRight(string(r), " ")
	}
	return out
}

// String is the screen with the cursor row marked, for failure messages.
func (s *screen) String() string {
	var b strings.Builder
	for i, l := range s.Lines() {
		mark := "  |"
		if i == s.row {
			mark = "> |"
		}
		b.WriteString(mark + l + "\n")
	}
	return b.String()
}

// Cursor is the cursor's row and column, from 0.
func (s *screen) Cursor() (row, col int) { return s.row, s.col }

func (s *screen) Write(p []byte) {
	b := append(s.pending, p...)
	s.pending = nil
	for len(b) > 0 {
		n := s.step(b)
		if n == 0 { // incomplete: wait for more
			s.pending = append([]byte(nil), b...)
			return
		}
		b = b[n:]
	}
}

// step consumes one character or sequence from b; 0 if b is incomplete.
func (s *screen) step(b []byte) int {
	switch c := b[0]; {
	case c == 0x1b:
		return s.escape(b)
	case c == '\r':
		s.col, s.wrapNext = 0, false
	case c == '\n', c == 0x0b, c == 0x0c:
		s.lineFeed()
	case c == '\b':
		if s.col > 0 {
			s.col--
		}
		s.wrapNext = false
	case c == '\t':
		s.col = min((s.col/8+1)*8, s.cols-1)
	case c < 0x20 || c == 0x7f:
	default:
		r, n := decodeRune(b)
		if n == 0 {
			return 0
		}
		s.put(r)
		return n
	}
	return 1
}

func decodeRune(b []byte) (rune, int) {
	s := string(b[:min(len(b), 4)])
	for i, r := range s {
		if i > 0 {
			break
		}
		if r == '\uFFFD' && len(b) < 4 && b[0] >= 0xc0 {
			return 0, 0 // possibly cut
		}
		return r, len(string(r))
	}
	return 0, 0
}

func (s *screen) put(r rune) {
	if s.wrapNext {
		s.col = 0
		s.lineFeed()
	}
	s.cells[s.row][s.col] = r
	if s.col == s.cols-1 {
		s.wrapNext = true
	} else {
		s.col++
	}
}

func (s *screen) lineFeed() {
	s.wrapNext = false
	if s.row < s.rows-1 {
		s.row++
		return
	}
	copy(s.cells, s.cells[1:])
	s.cells[s.rows-1] = blankRow(s.cols)
}

func (s *screen) escape(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '[':
		for i := 2; i < len(b); i++ {
			if b[i] >= 0x40 && b[i] <= 0x7e {
				s.csi(string(b[2:i]), b[i])
				return i + 1
			}
		}
		return 0
	case ']': // OSC, up to BEL or ST
		for i := 2; i < len(b); i++ {
			if b[i] == 0x07 {
				return i + 1
			}
			if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '\\' {
				return i + 2
			}
		}
		return 0
	case '7':
		s.savedRow, s.savedCol = s.row, s.col
	case '8':
		s.row, s.col, s.wrapNext = s.savedRow, s.savedCol, false
	case '(', ')':
		if len(b) < 3 {
			return 0
		}
		return 3
	}
	return 2
}

func (s *screen) csi(params string, final byte) {
	if strings.HasPrefix(params, "?") || strings.HasPrefix(params, ">") {
		return // modes
	}
	var args []int
	for _, p := range strings.Split(params, ";") {
		n, _ := strconv.Atoi(p)
		args = append(args, n)
	}
	arg := func(i, def int) int {
		if i < len(args) && args[i] > 0 {
			return args[i]
		}
		return def
	}
	clampRow := func(r int) int { return max(0, min(r, s.rows-1)) }
	clampCol := func(c int) int { return max(0, min(c, s.cols-1)) }
	s.wrapNext = false
	switch final {
	case 'A':
		s.row = clampRow(s.row - arg(0, 1))
	case 'B':
		s.row = clampRow(s.row + arg(0, 1))
	case 'C':
		s.col = clampCol(s.col + arg(0, 1))
	case 'D':
		s.col = clampCol(s.col - arg(0, 1))
	case 'E':
		s.row, s.col = clampRow(s.row+arg(0, 1)), 0
	case 'F':
		s.row, s.col = clampRow(s.row-arg(0, 1)), 0
	case 'G':
		s.col = clampCol(arg(0, 1) - 1)
	case 'H', 'f':
		s.row, s.col = clampRow(arg(0, 1)-1), clampCol(arg(1, 1)-1)
	case 'J':
		switch arg(0, 0) {
		case 0:
			s.clear(s.row, s.col, s.cols)
			for r := s.row + 1; r < s.rows; r++ {
				s.cells[r] = blankRow(s.cols)
			}
		case 1:
			for r := 0; r < s.row; r++ {
				s.cells[r] = blankRow(s.cols)
			}
			s.clear(s.row, 0, s.col+1)
		default:
			for r := range s.cells {
				s.cells[r] = blankRow(s.cols)
			}
		}
	case 'K':
		switch arg(0, 0) {
		case 0:
			s.clear(s.row, s.col, s.cols)
		case 1:
			s.clear(s.row, 0, s.col+1)
		default:
			s.clear(s.row, 0, s.cols)
		}
	case 'P': // delete characters
		n := min(arg(0, 1), s.cols-s.col)
		row := s.cells[s.row]
		copy(row[s.col:], row[s.col+n:])
		s.clear(s.row, s.cols-n, s.cols)
	case 'X':
		s.clear(s.row, s.col, min(s.cols, s.col+arg(0, 1)))
	}
}

func (s *screen) clear(row, from, to int) {
	for c := max(from, 0); c < min(to, s.cols); c++ {
		s.cells[row][c] = ' '
	}
}
