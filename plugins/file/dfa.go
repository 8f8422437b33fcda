package file

import (
	"bytes"
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// A dfa is a prefilter for a regexp that has no literal to look for: a
// lazily built deterministic automaton over the regexp's program that finds
// the lines that may match, for the regexp to confirm. It accepts more than
// the regexp (empty-width assertions such as ^, $ and \b are taken as
// always true), never less. Each worker has its own, since states are added
// as the text needs them.
type dfa struct {
	prog  *syntax.Prog
	start int32

	// trans[s<<7|c] is the state after ASCII byte c in state s: 0 not yet
	// known, negative a state where the regexp may have matched.
	trans  []int32
	sets   [][]uint32 // each state's program counters
	ids    map[string]int32
	runes  map[uint64]int32 // transitions on non-ASCII characters
	failed bool             // too many states: the prefilter is off
	scratch
}

type scratch struct {
	seen  []bool
	stack []uint32
	next  []uint32
	key   []byte
}

// maxDFAStates bounds a dfa's memory (128 transitions of 4 bytes a state).
const maxDFAStates = 4096

// newDFAProg compiles expr for a dfa, or returns nil when a dfa cannot help
// (the regexp matches the empty string, so every line is a candidate).
func newDFAProg(expr string) *syntax.Prog {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil
	}
	d := newDFA(prog)
	if d == nil {
		return nil
	}
	return prog
}

func newDFA(prog *syntax.Prog) *dfa {
	d := &dfa{prog: prog, ids: map[string]int32{}, runes: map[uint64]int32{}}
	d.seen = make([]bool, len(prog.Inst))
	d.trans = make([]int32, 128) // state 0 is unused: 0 means unknown
	d.sets = [][]uint32{nil}
	d.next = d.closure(d.next[:0], uint32(prog.Start))
	slices.Sort(d.next)
	id := d.state(d.next)
	if id < 0 {
		return nil
	}
	d.start = id
	return d
}

// closure adds pc and what it reaches without consuming input to set.
func (d *dfa) closure(set []uint32, pc uint32) []uint32 {
	d.stack = append(d.stack[:0], pc)
	for len(d.stack) > 0 {
		pc := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if d.seen[pc] {
			continue
		}
		d.seen[pc] = true
		set = append(set, pc)
		inst := &d.prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			d.stack = append(d.stack, inst.Arg, inst.Out)
		case syntax.InstCapture, syntax.InstEmptyWidth, syntax.InstNop:
			d.stack = append(d.stack, inst.Out)
		}
	}
	return set
}

// state returns the id of the state with these program counters (sorted),
// adding it if new; negative when the regexp may have matched. It clears
// the seen marks of set.
func (d *dfa) state(set []uint32) int32 {
	match := false
	d.key = d.key[:0]
	n := 0
	for _, pc := range set {
		d.seen[pc] = false
		switch d.prog.Inst[pc].Op {
		case syntax.InstMatch:
			match = true
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		default:
			continue // only the instructions that consume or match matter
		}
		d.key = binary.LittleEndian.AppendUint32(d.key, pc)
		n++
	}
	if id, ok := d.ids[string(d.key)]; ok {
		return id
	}
	if len(d.sets) >= maxDFAStates {
		d.failed = true
		return 0
	}
	id := int32(len(d.sets))
	kept := make([]uint32, 0, n)
	for i := 0; i < len(d.key); i += 4 {
		kept = append(kept, binary.LittleEndian.Uint32(d.key[i:]))
	}
	d.sets = append(d.sets, kept)
	d.trans = append(d.trans, make([]int32, 128)...)
	if match {
		id = -id
	}
	d.ids[string(d.key)] = id
	return id
}

// step computes the state after rune r in state s (s > 0).
func (d *dfa) step(s int32, r rune) int32 {
	if r == '\n' {
		return d.start // lines are searched one by one
	}
	next := d.next[:0]
	for _, pc := range d.sets[s] {
		inst := &d.prog.Inst[pc]
		if inst.Op != syntax.InstMatch && inst.MatchRune(r) {
			next = d.closure(next, inst.Out)
		}
	}
	// The search is unanchored: a match may start at any character.
	next = d.closure(next, uint32(d.prog.Start))
	slices.Sort(next)
	d.next = next
	return d.state(next)
}

// nextCandidate returns the first line at or after pos (a line start) that
// may match: its start and end (the index of its "\n", or len(data)). ok is
// false when no line may match, or, with failed set, when the dfa gave up.
func (d *dfa) nextCandidate(data []byte, pos int) (start, end int, ok bool) {
	s := d.start
	trans := d.trans
	i := pos
	for i < len(data) {
		c := data[i]
		var t int32
		if c < utf8.RuneSelf {
			t = trans[int(s)<<7|int(c)]
			if t > 0 {
				s = t
				i++
				continue
			}
			if t == 0 {
				t = d.step(s, rune(c))
				if d.failed {
					return 0, 0, false
				}
				trans = d.trans
				trans[int(s)<<7|int(c)] = t
			}
			i++
		} else {
			r, size := utf8.DecodeRune(data[i:])
			key := uint64(s)<<32 | uint64(r)
			var known bool
			if t, known = d.runes[key]; !known {
				t = d.step(s, r)
				if d.failed {
					return 0, 0, false
				}
				trans = d.trans
				d.runes[key] = t
			}
			i += size
		}
		if t < 0 {
			at := i - 1
			st := pos + bytes.LastIndexByte(data[pos:at], '\n') + 1
			e := lineEnd(data, at)
			return st, e, true
		}
		s = t
	}
	return 0, 0, false
}
