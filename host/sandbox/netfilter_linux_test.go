package sandbox

import (
	"strings"
	"testing"

	"golang.org/x/net/bpf"
)

func TestAsmErrors(t *testing.T) {
	backward := func(p *asm) { p.label("top"); p.ret(0); p.jeq(1, "top", "") }
	missing := func(p *asm) { p.jmp("nowhere"); p.ret(0) }
	far := func(p *asm) {
		p.jeq(1, "end", "")
		for range 300 {
			p.add(bpf.LoadAbsolute{Off: 0, Size: 4})
		}
		p.label("end")
		p.ret(0)
	}
	for name, build := range map[string]func(*asm){"backward": backward, "missing": missing, "far": far} {
		var p asm
		build(&p)
		if _, err := p.assemble(); err == nil || !strings.HasPrefix(err.Error(), "socket filter: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestProgramAssembles(t *testing.T) {
	a, ok := filterArchs()
	if !ok {
		t.Skip("no socket filter for this architecture")
	}
	for _, udp := range []bool{false, true} {
		insts, err := program(a, udp)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bpf.Assemble(insts); err != nil {
			t.Fatal(err)
		}
	}
}
