package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeEnv makes the test binary a probe: it tries one operation and exits
// 0 when it was allowed, 3 when it was refused (printing the error), 2 on
// a bad probe.
const probeEnv = "KOSONG_SANDBOX_TEST_PROBE"

// runProbe runs "OP[:ARG]".
func runProbe(probe string) int {
	op, arg, _ := strings.Cut(probe, ":")
	var err error
	switch op {
	case "signal": // SIGTERM to the process ARG
		pid, _ := strconv.Atoi(arg)
		err = unix.Kill(pid, unix.SIGTERM)
	case "abstract": // connect to the abstract unix socket @ARG
		var c net.Conn
		if c, err = net.Dial("unix", "@"+arg); err == nil {
			c.Close()
		}
	case "abstract-own": // listen on @ARG and connect to it
		var l net.Listener
		if l, err = net.Listen("unix", "@"+arg); err == nil {
			var c net.Conn
			if c, err = net.Dial("unix", "@"+arg); err == nil {
				c.Close()
			}
			l.Close()
		}
	case "mem": // open /proc/ARG/mem (the ptrace access check)
		var f *os.File
		if f, err = os.Open("/proc/" + arg + "/mem"); err == nil {
			f.Close()
		}
	case "socket": // create a socket: DOMAIN,TYPE,PROTO
		var n [3]int
		for i, f := range strings.SplitN(arg, ",", 3) {
			n[i], _ = strconv.Atoi(f)
		}
		var fd int
		if fd, err = unix.Socket(n[0], n[1], n[2]); err == nil {
			unix.Close(fd)
		}
	case "tcp": // connect to the TCP address ARG
		var c net.Conn
		if c, err = net.Dial("tcp", arg); err == nil {
			c.Close()
		}
	case "udp": // send a datagram to the UDP address ARG
		var c net.Conn
		if c, err = net.Dial("udp", arg); err == nil {
			_, err = c.Write([]byte("x"))
			c.Close()
		}
	case "io_uring":
		var p [30]uint32 // struct io_uring_params, zeroed
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&p)), 0)
		if errno != 0 {
			err = errno
		} else {
			unix.Close(int(fd))
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown probe %q\n", probe)
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0
}

// probe runs the probe through the test binary as the wrapper, confined
// by p (nil: unconfined); it reports whether the operation was allowed.
func probe(t *testing.T, p *Policy, op string) (bool, string) {
	t.Helper()
	var cmd *exec.Cmd
	if p == nil {
		cmd = exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = os.Environ()
	} else {
		cmd = exec.Command(os.Args[0], os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "KOSONG_SANDBOX_TEST_RULES="+p.Marshal())
	}
	cmd.Env = append(cmd.Env, probeEnv+"="+op)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, string(out)
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		return false, string(out)
	}
	t.Fatalf("probe %s: %v: %s", op, err, out)
	return false, ""
}

// outsider starts a process outside any sandbox that reports, when its
// stdin closes, whether it received SIGTERM; stop closes stdin and returns
// that report.
func outsider(t *testing.T) (pid int, stop func() string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `trap 'echo signalled; exit 0' TERM; read x; echo quiet`)
	cmd.Env = append(os.Environ(), "KOSONG_OUTSIDER_SECRET=s3cret")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	stop = func() string {
		if !done {
			done = true
			in.Close()
			_ = cmd.Wait()
		}
		return strings.TrimSpace(out.String())
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL); stop() })
	return cmd.Process.Pid, stop
}
