//go:build linux

package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const helperEnv = "KOSONG_PROC_TEST_HELPER"

// TestMain lets the test binary serve as the process that calls
// ExecUnprivileged (it replaces the process, so it cannot run in a test).
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "exec":
		err := ExecUnprivileged([]string{"/bin/sh", "-c", "grep -E '^Cap(Bnd|Eff|Inh|Amb):' /proc/self/status"}, os.Environ())
		os.Stderr.WriteString(err.Error())
		os.Exit(126)
	case "no-setpcap":
		// A root process without CAP_SETPCAP cannot drop from its bounding set.
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		_ = unix.Capget(&hdr, &data[0])
		data[0].Effective &^= 1 << unix.CAP_SETPCAP
		data[0].Permitted &^= 1 << unix.CAP_SETPCAP
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			os.Stderr.WriteString("capset: " + err.Error())
			os.Exit(3)
		}
		err := ExecUnprivileged([]string{"/bin/true"}, os.Environ())
		os.Stderr.WriteString(err.Error())
		os.Exit(126)
	case "limit":
		limitHelper()
	case "swap":
		swapHelper()
	case "whoami":
		os.Stdout.WriteString("the running binary\n")
		os.Exit(0)
	case "bare":
		err := ExecUnprivileged([]string{"sh"}, os.Environ())
		os.Stderr.WriteString(err.Error())
		os.Exit(126)
	}
	os.Exit(m.Run())
}

func helper(t *testing.T, mode string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestExecUnprivileged: the program runs without DroppedCaps in any set;
// a root process that cannot drop CAP_SYS_PTRACE refuses to exec; a bare
// name is refused.
func TestExecUnprivileged(t *testing.T) {
	out, errs, code := helper(t, "exec")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, hex, _ := strings.Cut(line, ":")
		v, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		for _, c := range DroppedCaps {
			if v&(1<<c) != 0 {
				t.Errorf("%s = %s has capability %d", name, strings.TrimSpace(hex), c)
			}
		}
	}
	if _, errs, code := helper(t, "bare"); code != 126 || errs != "sh: want a path" {
		t.Errorf("bare name: exit %d, %q", code, errs)
	}
	if os.Geteuid() != 0 {
		t.Skip("the refusal is for a root host")
	}
	_, errs, code = helper(t, "no-setpcap")
	if code != 126 || !strings.HasPrefix(errs, "cannot drop CAP_SYS_PTRACE from the capability bounding set") {
		t.Errorf("without CAP_SETPCAP: exit %d, %q", code, errs)
	}
}

// limitHelper: a thread that exists before LimitChildren (locked to a
// goroutine) executes a program after it; the program reports its
// capability sets and the helper its own effective set.
func limitHelper() {
	ready, run := make(chan struct{}), make(chan struct{})
	out := make(chan []byte)
	go func() {
		runtime.LockOSThread()
		close(ready)
		<-run
		b, err := exec.Command("/bin/sh", "-c", "grep -E '^Cap(Bnd|Inh|Amb):' /proc/self/status").Output()
		if err != nil {
			b = []byte("error: " + err.Error())
		}
		out <- b
	}()
	<-ready
	if err := LimitChildren(); err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(3)
	}
	close(run)
	os.Stdout.Write(<-out)
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "CapEff:") {
			os.Stdout.WriteString("Self" + l + "\n")
		}
	}
	os.Exit(0)
}

// swapHelper runs as a copy of the test binary: it puts a script at its
// own path and then runs Self, and Command's path for its own path.
func swapHelper() {
	exe, err := os.Executable()
	if err == nil {
		fake := exe + ".fake"
		if err = os.WriteFile(fake, []byte("#!/bin/sh\necho the file at the path\n"), 0o755); err == nil {
			err = os.Rename(fake, exe)
		}
	}
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(3)
	}
	self, _ := Self()
	for _, cmd := range []*exec.Cmd{exec.Command(self, "-test.run=^$"), Command(nil, exe, "-test.run=^$")} {
		cmd.Env = append(os.Environ(), helperEnv+"=whoami")
		b, err := cmd.Output()
		if err != nil {
			b = []byte(err.Error() + "\n")
		}
		os.Stdout.Write(b)
	}
	os.Exit(0)
}

// TestLimitChildren: after LimitChildren, a program started from any
// thread has none of DroppedCaps in its bounding, inheritable or ambient
// set, while the process keeps its own.
func TestLimitChildren(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a normal user has no bounding set to drop from (no CAP_SETPCAP)")
	}
	out, errs, code := helper(t, "limit")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sets := map[string]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, hex, _ := strings.Cut(line, ":")
		v, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		sets[name] = v
	}
	for _, name := range []string{"CapBnd", "CapInh", "CapAmb"} {
		v, ok := sets[name]
		if !ok {
			t.Fatalf("no %s in %q", name, out)
		}
		for _, c := range DroppedCaps {
			if v&(1<<c) != 0 {
				t.Errorf("child's %s = %x has capability %d", name, v, c)
			}
		}
	}
	if sets["SelfCapEff"]&(1<<unix.CAP_SYS_PTRACE) == 0 {
		t.Errorf("the process lost its own CAP_SYS_PTRACE: CapEff %x", sets["SelfCapEff"])
	}
}

// TestSelfIsTheRunningBinary: once the file at the binary's path is
// replaced, Self and a Command for that path still run the binary that is
// running.
func TestSelfIsTheRunningBinary(t *testing.T) {
	src, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "proc.test")
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=swap")
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if want := "the running binary\nthe running binary\n"; string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}
