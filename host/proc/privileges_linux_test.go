//go:build linux

package proc

import (
	"os"
	"os/exec"
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
