package sandbox

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A confined process can neither signal a process outside its sandbox nor
// connect to an abstract unix socket created outside it; inside, both work.
func TestExecScopes(t *testing.T) {
	if abi := ABI(); abi < ScopeABI {
		t.Skipf("this kernel's Landlock (ABI %d) has no IPC scopes (ABI %d+)", abi, ScopeABI)
	}
	p := &Policy{Plugin: "probe", Read: []string{"/"}, Write: []string{t.TempDir()}, Network: Network{All: true}}

	t.Run("signal outside", func(t *testing.T) {
		pid, stop := outsider(t)
		if ok, out := probe(t, p, "signal:"+strconv.Itoa(pid)); ok || !strings.Contains(out, "operation not permitted") {
			t.Errorf("a confined SIGTERM to an outside process: allowed %v, %q", ok, out)
		}
		if got := stop(); got != "quiet" {
			t.Errorf("the outside process reports %q, want quiet", got)
		}
		// The same probe unconfined does reach it.
		pid, stop = outsider(t)
		if ok, out := probe(t, nil, "signal:"+strconv.Itoa(pid)); !ok {
			t.Fatalf("an unconfined SIGTERM: %s", out)
		}
		if got := stop(); got != "signalled" {
			t.Errorf("the unconfined probe's target reports %q, want signalled", got)
		}
	})
	t.Run("signal inside", func(t *testing.T) {
		if out, err := confined(t, *p, "sleep 30 & kill $! && wait $!; test $? = 143"); err != nil {
			t.Errorf("a confined shell killing its own child: %v: %s", err, out)
		}
	})

	t.Run("abstract socket outside", func(t *testing.T) {
		name := fmt.Sprintf("kosong-sandbox-test-%d", os.Getpid())
		l, err := net.Listen("unix", "@"+name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		if ok, out := probe(t, p, "abstract:"+name); ok || !strings.Contains(out, "operation not permitted") {
			t.Errorf("a confined connect to an outside abstract socket: allowed %v, %q", ok, out)
		}
		if ok, out := probe(t, nil, "abstract:"+name); !ok {
			t.Errorf("an unconfined connect: %s", out)
		}
	})
	t.Run("abstract socket inside", func(t *testing.T) {
		name := fmt.Sprintf("kosong-sandbox-own-%d", os.Getpid())
		if ok, out := probe(t, p, "abstract-own:"+name); !ok {
			t.Errorf("a confined process connecting to its own abstract socket: %s", out)
		}
	})
}

// A confined process cannot open the memory of a process outside its
// sandbox (Landlock refuses ptrace access, ABI 1), whatever its user. (It
// can still read that process's /proc/PID/environ and cmdline when the
// user may: Landlock leaves those to the usual checks.)
func TestExecPtraceOutside(t *testing.T) {
	if ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	p := &Policy{Plugin: "probe", Read: []string{"/"}, Write: []string{t.TempDir()}, Network: Network{All: true}}
	pid, _ := outsider(t)
	op := "mem:" + strconv.Itoa(pid)
	if ok, out := probe(t, p, op); ok || !strings.Contains(out, "permission denied") {
		t.Errorf("a confined open of an outside process's memory: allowed %v, %q", ok, out)
	}
	if ok, out := probe(t, nil, op); !ok {
		t.Errorf("an unconfined open: %s", out)
	}
}

// network none refuses every socket but unix, netlink and plain TCP (whose
// connect Landlock refuses), and io_uring; network ports allows UDP too.
func TestExecSocketFilter(t *testing.T) {
	if abi := ABI(); abi < NetworkABI {
		t.Skipf("this kernel's Landlock (ABI %d) has no network rules (ABI %d+)", abi, NetworkABI)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	port := uint16(tcp.Addr().(*net.TCPAddr).Port)
	sock := func(d, ty, proto int) string { return fmt.Sprintf("socket:%d,%d,%d", d, ty, proto) }
	none := &Policy{Plugin: "probe", Read: []string{"/"}, Write: []string{t.TempDir()}}
	ports := &Policy{Plugin: "probe", Read: []string{"/"}, Write: []string{t.TempDir()}, Network: Network{Ports: []uint16{port}}}
	for _, tc := range []struct {
		name       string
		op         string
		none, port bool // allowed under network none, under network [port]
	}{
		{"unix", sock(unix.AF_UNIX, unix.SOCK_STREAM, 0), true, true},
		{"netlink", sock(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE), true, true},
		{"tcp socket", sock(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, unix.IPPROTO_TCP), true, true},
		{"tcp connect", "tcp:" + tcp.Addr().String(), false, true},
		{"udp socket", sock(unix.AF_INET, unix.SOCK_DGRAM, 0), false, true},
		{"udp6 socket", sock(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP), false, true},
		{"udp send", "udp:" + udp.LocalAddr().String(), false, true},
		{"multipath tcp", sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), false, false},
		{"icmp", sock(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP), false, false},
		{"sctp", sock(unix.AF_INET, unix.SOCK_SEQPACKET, unix.IPPROTO_SCTP), false, false},
		{"raw", sock(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_UDP), false, false},
		{"packet", sock(unix.AF_PACKET, unix.SOCK_DGRAM, 0), false, false},
		{"io_uring", "io_uring", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				p    *Policy
				want bool
			}{{none, tc.none}, {ports, tc.port}} {
				if ok, out := probe(t, c.p, tc.op); ok != c.want {
					t.Errorf("network %s: allowed %v, want %v (%s)", c.p.Network, ok, c.want, strings.TrimSpace(out))
				}
			}
		})
	}
	// The refusals are the sandbox's: unconfined, the same probes succeed.
	for _, op := range []string{"udp:" + udp.LocalAddr().String(), sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), "io_uring"} {
		if ok, out := probe(t, nil, op); !ok {
			t.Errorf("unconfined %s: %s", op, out)
		}
	}
}
