package file

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// sniffBinary is looksBinary with a fast path for the common case, a sample
// that is all ASCII: then each byte is a character, and the control
// characters are counted eight bytes at a time.
func sniffBinary(sample []byte, atEOF bool) bool {
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	if ascii, bad := asciiControls(sample); ascii {
		return bad*10 > len(sample)
	}
	return looksBinary(sample, atEOF)
}

// asciiControls reports whether sample is all ASCII and, if so, how many of
// its bytes are control characters other than whitespace and escape, which
// looksBinary counts against a text.
func asciiControls(sample []byte) (ascii bool, bad int) {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(sample); i += 8 {
		x := binary.LittleEndian.Uint64(sample[i:])
		if x&highs != 0 {
			return false, 0
		}
		// With each byte's high bit set first, subtracting from a byte never
		// borrows from the next: the high bit stays set exactly where the
		// byte is at least what is subtracted.
		y := x | highs
		below20 := ^(y - ones*0x20) & highs
		space := (y - ones*'\t') &^ (y - ones*('\r'+1)) & highs // \t \n \v \f \r
		esc := ^((x ^ ones*0x1b | highs) - ones) & highs
		bad += bits.OnesCount64(below20 &^ space &^ esc)
	}
	for _, c := range sample[i:] {
		if c >= utf8.RuneSelf {
			return false, 0
		}
		if c < 0x20 && !isTextControl(c) {
			bad++
		}
	}
	return true, bad
}

func isTextControl(c byte) bool {
	return c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '\v' || c == 0x1b
}
