package file

import (
	"encoding/binary"
	"math/bits"
	"strings"
)

// foldFinder finds an ASCII literal in a text case-insensitively without
// copying the text: it looks for two of the literal's rarest bytes at their
// distance, eight positions at a time, and compares the whole literal only
// where both are found.
type foldFinder struct {
	lit    []byte // lower-case
	i1, i2 int    // the positions in lit of the two bytes looked for (i2 == i1 for a one-byte literal)
	m1, m2 uint64 // those bytes, lower-case, in every byte
	f1, f2 uint64 // 0x20 in every byte for a letter (x|0x20 folds its case), else 0
}

const (
	swarOnes  = 0x0101010101010101
	swarHighs = 0x8080808080808080
)

func newFoldFinder(lit []byte) *foldFinder {
	f := &foldFinder{lit: lit}
	f.i1, f.i2 = 0, 0
	best := -1
	for i, c := range lit {
		if best < 0 || byteRank(c) < byteRank(lit[best]) {
			best = i
		}
	}
	second := -1
	for i, c := range lit {
		if i == best || c == lit[best] {
			continue
		}
		if second < 0 || byteRank(c) < byteRank(lit[second]) {
			second = i
		}
	}
	if second < 0 {
		second = best
	}
	f.i1, f.i2 = min(best, second), max(best, second)
	f.m1, f.f1 = foldMask(lit[f.i1])
	f.m2, f.f2 = foldMask(lit[f.i2])
	return f
}

func foldMask(c byte) (m, fold uint64) {
	if 'a' <= c && c <= 'z' {
		return swarOnes * uint64(c), swarOnes * 0x20
	}
	return swarOnes * uint64(c), 0
}

// byteRank orders bytes by how common they are in source code and prose,
// most common highest.
func byteRank(c byte) int {
	const letters = "qjzxvkwybgfhmpudclrsnioate" // rarest first
	if i := strings.IndexByte(letters, c); i >= 0 {
		return 10 + i
	}
	switch {
	case c == ' ':
		return 40
	case c == '\n' || c == '\t':
		return 38
	case strings.IndexByte("().,;=\"_/*-:{}", c) >= 0:
		return 30
	case '0' <= c && c <= '9':
		return 9
	}
	return 5
}

// zeroBytes has the high bit set in each byte of x that is zero (and maybe
// in a byte above one): a candidate mask, checked exactly afterwards.
func zeroBytes(x uint64) uint64 { return (x - swarOnes) &^ x & swarHighs }

// index returns the index of the first case-insensitive occurrence of the
// literal in hay, or -1.
func (f *foldFinder) index(hay []byte) int {
	n := len(f.lit)
	if len(hay) < n {
		return -1
	}
	d := f.i2 - f.i1
	// j is where the first byte looked for would be; the literal starts at j-i1.
	j := f.i1
	last := len(hay) - n + f.i1 // the last j a whole literal fits at
	m1, f1, m2, f2 := f.m1, f.f1, f.m2, f.f2
	for end := min(len(hay)-d-8, last); j <= end; j += 8 {
		x1 := binary.LittleEndian.Uint64(hay[j : j+8])
		x2 := binary.LittleEndian.Uint64(hay[j+d : j+d+8])
		mask := zeroBytes((x1|f1)^m1) & zeroBytes((x2|f2)^m2)
		if mask == 0 {
			continue
		}
		for mask != 0 {
			k := bits.TrailingZeros64(mask) / 8
			mask &= mask - 1
			start := j + k - f.i1
			if start+n <= len(hay) && equalFoldASCII(hay[start:start+n], f.lit) {
				return start
			}
		}
	}
	for ; j <= last; j++ {
		start := j - f.i1
		if equalFoldASCII(hay[start:start+n], f.lit) {
			return start
		}
	}
	return -1
}

// equalFoldASCII reports whether a equals the lower-case lit with ASCII
// letters in any case.
func equalFoldASCII(a, lit []byte) bool {
	for i, c := range lit {
		b := a[i]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if b != c {
			return false
		}
	}
	return true
}
