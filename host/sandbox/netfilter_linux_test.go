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

// Where the socket filter cannot be installed, a required sandbox refuses
// to run the program, in one line; another runs it with a warning, and
// UDP is then not refused.
func TestExecWithoutSocketFilter(t *testing.T) {
	if abi := ABI(); abi < NetworkABI {
		t.Skipf("this kernel's Landlock (ABI %d) has no network rules (ABI %d+)", abi, NetworkABI)
	}
	t.Setenv("KOSONG_SANDBOX_TEST_NO_FILTER", "1")
	p := Policy{Plugin: "probe", Read: []string{"/"}, Write: []string{t.TempDir()}, Required: true}
	out, err := confined(t, p, "true")
	if err == nil || strings.TrimSpace(out) != "sandbox of plugin probe: cannot refuse UDP and raw sockets: no socket filter for this architecture" {
		t.Errorf("required: err %v, output %q", err, out)
	}
	p.Required = false
	out, err = confined(t, p, "echo ran")
	if err != nil || !strings.Contains(out, "ran") || !strings.Contains(out, "kosong-host: sandbox of plugin probe: UDP and raw sockets are not refused") {
		t.Errorf("not required: err %v, output %q", err, out)
	}
	if ok, out := probe(t, &p, "socket:2,2,0"); !ok {
		t.Errorf("UDP without the filter: %s", out)
	}
}
