//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The socket filter is a seccomp program that closes what Landlock's
// network rules leave open. Landlock (up to ABI 9) governs TCP only, and
// not Multipath TCP: a policy without network access would still send UDP
// (DNS included), ICMP and raw packets, and reach any TCP port through an
// IPPROTO_MPTCP socket. The filter refuses to create such sockets:
//
//   - network none: only unix and netlink sockets and plain TCP sockets
//     (whose connect and bind Landlock refuses) are created;
//   - network ports: UDP sockets too (name lookups need them);
//   - io_uring, which creates sockets past seccomp, is refused (ENOSYS:
//     programs fall back to ordinary system calls);
//   - a 32-bit program (i386 on amd64, arm on arm64) may create no socket
//     at all: socketcall hides its arguments from the filter.
//
// It is hand-written with golang.org/x/net/bpf rather than built with a
// seccomp library: go-seccomp-bpf sends the system calls of another
// architecture to the default action (here: allow), which would let a
// 32-bit socketcall through, and it cannot compare the masked socket type.

// errNoFilter is returned on architectures the filter does not know.
var errNoFilter = errors.New("no socket filter for this architecture")

// seccomp_data offsets (include/uapi/linux/seccomp.h), little endian.
const (
	offNR   = 0
	offArch = 4
	offArg0 = 16 // the low 32 bits of args[0]; args[i] at 16+8*i
)

// filterArch describes the native and the 32-bit compat system calls of
// one architecture.
type filterArch struct {
	native, compat uint32
	// x32 is the bit of x32 system call numbers (amd64 only; 0 = none).
	x32 uint32
	// socket and ioURing are the native system call numbers.
	socket, ioURing uint32
	// compatDenied are the compat system calls refused outright.
	compatDenied []uint32
}

const (
	retAllow     = unix.SECCOMP_RET_ALLOW
	retEACCES    = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retENOSYS    = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	sockTypeMask = 0xf // SOCK_TYPE_MASK: the type without SOCK_NONBLOCK, SOCK_CLOEXEC
)

// program is the filter for arch: UDP sockets allowed or not.
func program(a filterArch, allowUDP bool) ([]bpf.Instruction, error) {
	var p asm
	p.add(bpf.LoadAbsolute{Off: offArch, Size: 4})
	p.jeq(a.native, "native", "")
	p.jeq(a.compat, "compat", "")
	p.ret(retEACCES) // an architecture this filter does not know: nothing

	p.label("compat")
	p.add(bpf.LoadAbsolute{Off: offNR, Size: 4})
	for _, nr := range a.compatDenied {
		p.jeq(nr, "deny", "")
	}
	p.ret(retAllow)

	p.label("native")
	p.add(bpf.LoadAbsolute{Off: offNR, Size: 4})
	if a.x32 != 0 {
		p.jge(a.x32, "nosys", "")
	}
	p.jeq(a.ioURing, "nosys", "")
	p.jeq(a.socket, "", "allow")
	p.add(bpf.LoadAbsolute{Off: offArg0, Size: 4}) // domain
	p.jeq(unix.AF_UNIX, "allow", "")
	p.jeq(unix.AF_NETLINK, "allow", "")
	p.jeq(unix.AF_INET, "inet", "")
	p.jeq(unix.AF_INET6, "inet", "deny")

	p.label("inet")
	p.add(bpf.LoadAbsolute{Off: offArg0 + 8, Size: 4}) // type
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask})
	p.jeq(unix.SOCK_STREAM, "stream", "")
	if allowUDP {
		p.jeq(unix.SOCK_DGRAM, "dgram", "deny")
		p.label("dgram")
		p.add(bpf.LoadAbsolute{Off: offArg0 + 16, Size: 4}) // protocol
		p.jeq(0, "allow", "")
		p.jeq(unix.IPPROTO_UDP, "allow", "deny")
	} else {
		p.jmp("deny")
	}
	p.label("stream")
	p.add(bpf.LoadAbsolute{Off: offArg0 + 16, Size: 4}) // protocol
	p.jeq(0, "allow", "")
	p.jeq(unix.IPPROTO_TCP, "allow", "deny")

	p.label("allow")
	p.ret(retAllow)
	p.label("deny")
	p.ret(retEACCES)
	p.label("nosys")
	p.ret(retENOSYS)
	return p.assemble()
}

// applySocketFilter installs the filter on the calling thread, or on every
// thread of the process (SECCOMP_FILTER_FLAG_TSYNC); no_new_privs must be
// set.
func applySocketFilter(allowUDP, allThreads bool) error {
	a, ok := filterArchs()
	if !ok {
		return errNoFilter
	}
	insts, err := program(a, allowUDP)
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if allThreads {
		// A thread the filter cannot join makes the call return its id.
		if r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog))); e != 0 || r != 0 {
			return fmt.Errorf("seccomp (every thread): %v (%d)", e, r)
		}
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("seccomp: %v", err)
	}
	return nil
}

// asm is a tiny BPF assembler with named forward labels ("" = the next
// instruction).
type asm struct {
	insts  []bpf.Instruction
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at          int
	true, false string
}

func (p *asm) add(i bpf.Instruction) { p.insts = append(p.insts, i) }

func (p *asm) ret(v uint32) { p.add(bpf.RetConstant{Val: v}) }

func (p *asm) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.insts)
}

func (p *asm) jeq(v uint32, t, f string) { p.jump(bpf.JumpEqual, v, t, f) }

func (p *asm) jge(v uint32, t, f string) { p.jump(bpf.JumpGreaterOrEqual, v, t, f) }

func (p *asm) jump(c bpf.JumpTest, v uint32, t, f string) {
	p.fixups = append(p.fixups, fixup{len(p.insts), t, f})
	p.add(bpf.JumpIf{Cond: c, Val: v})
}

func (p *asm) jmp(to string) {
	p.fixups = append(p.fixups, fixup{len(p.insts), to, ""})
	p.add(bpf.Jump{})
}

func (p *asm) assemble() ([]bpf.Instruction, error) {
	skip := func(from int, to string) (int, error) {
		if to == "" {
			return 0, nil
		}
		at, ok := p.labels[to]
		if !ok || at <= from {
			return 0, fmt.Errorf("socket filter: bad label %q", to)
		}
		return at - from - 1, nil
	}
	for _, f := range p.fixups {
		t, err := skip(f.at, f.true)
		if err != nil {
			return nil, err
		}
		switch in := p.insts[f.at].(type) {
		case bpf.Jump:
			in.Skip = uint32(t)
			p.insts[f.at] = in
		case bpf.JumpIf:
			fs, err := skip(f.at, f.false)
			if err != nil {
				return nil, err
			}
			if t > 255 || fs > 255 {
				return nil, errors.New("socket filter: jump too long")
			}
			in.SkipTrue, in.SkipFalse = uint8(t), uint8(fs)
			p.insts[f.at] = in
		}
	}
	return p.insts, nil
}
