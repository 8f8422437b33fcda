package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// With KOSONG_SANDBOX_TEST_RULES set, the test binary is the wrapper: it
// confines itself and executes its arguments; with probeEnv set, it is a
// probe (see runProbe).
func TestMain(m *testing.M) {
	if rules := os.Getenv("KOSONG_SANDBOX_TEST_RULES"); rules != "" {
		p, err := Unmarshal(rules)
		if os.Getenv("KOSONG_SANDBOX_TEST_NO_FILTER") != "" {
			socketFilter = func(bool, bool) error { return errNoFilter }
		}
		if err == nil {
			os.Unsetenv("KOSONG_SANDBOX_TEST_RULES")
			err = Exec(p, os.Args[1:], os.Environ())
		}
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(111)
	}
	if probe := os.Getenv(probeEnv); probe != "" {
		os.Exit(runProbe(probe))
	}
	os.Exit(m.Run())
}

// confined runs sh -c script through the test binary as the wrapper.
func confined(t *testing.T, p Policy, script string) (string, error) {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	cmd := exec.Command(os.Args[0], sh, "-c", script)
	cmd.Env = append(os.Environ(), "KOSONG_SANDBOX_TEST_RULES="+p.Marshal())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestExecConfines(t *testing.T) {
	if ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	in, out := t.TempDir(), t.TempDir()
	file := filepath.Join(out, "allowed.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := Policy{Plugin: "probe", Read: []string{"/"}, Write: []string{in, file}}
	for _, tc := range []struct {
		name, script string
		ok           bool
	}{
		{"write inside", "echo x > " + filepath.Join(in, "f"), true},
		{"write outside", "echo x > " + filepath.Join(out, "f"), false},
		{"a grandchild writes outside", "sh -c 'echo x > " + filepath.Join(out, "g") + "'", false},
		{"/dev/null", "echo x > /dev/null", true},
		{"a writable file", "echo x > " + file, true},
		{"beside a writable file", "echo x > " + filepath.Join(out, "f"), false},
		{"the policy in the environment", `test -n "$` + EnvVar + `"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := confined(t, p, tc.script)
			if (err == nil) != tc.ok {
				t.Fatalf("%s: err %v, output %q", tc.script, err, got)
			}
		})
	}
	// Ports are tested through a real plugin (host/agent).
	if _, err := os.Stat(filepath.Join(out, "f")); err == nil {
		t.Error("a refused write left a file")
	}
}

func TestExecFailsCleanly(t *testing.T) {
	if ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	got, err := confined(t, Policy{Plugin: "probe", Read: []string{"/"}, Write: []string{"/no/such/dir"}}, "true")
	if err == nil || !strings.Contains(got, "sandbox of plugin probe:") || strings.Count(strings.TrimSpace(got), "\n") > 0 {
		t.Fatalf("bad rule: err %v, output %q", err, got)
	}
}
