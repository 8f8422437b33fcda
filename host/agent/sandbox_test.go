package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/testbin"
)

// sandboxOptions are options whose plugins get a temp dir of their own
// (writable in every sandbox), apart from the test's other folders.
func sandboxOptions(t *testing.T) agent.Options {
	t.Helper()
	host, err := testbin.Build("cmd/kosong-host", "kosong-host")
	if err != nil {
		t.Fatal(err)
	}
	opts := options(t, approval.Deny{})
	tmp := t.TempDir()
	getenv := opts.Getenv
	opts.Getenv = func(k string) string {
		if k == "TMPDIR" {
			return tmp
		}
		return getenv(k)
	}
	opts.SandboxExec = host
	return opts
}

func listen(t *testing.T) (string, uint16) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String(), uint16(l.Addr().(*net.TCPAddr).Port)
}

func needLandlock(t *testing.T, abi int) {
	t.Helper()
	if got := sandbox.ABI(); got < abi {
		t.Skipf("this kernel's Landlock ABI is %d; the test needs %d or later", got, abi)
	}
}

// A sandboxed plugin, and every child it starts, can write only in its
// write paths and connect only to its ports.
func TestSandboxConfinesPluginAndItsChildren(t *testing.T) {
	needLandlock(t, sandbox.NetworkABI)
	probe := build(t, "host/testdata/plugins/sandboxprobe")
	allowed, port := listen(t)
	forbidden, _ := listen(t)
	opts := sandboxOptions(t)
	outside := t.TempDir()
	path := writeAgent(t, fmt.Sprintf(`{plugin: %q, sandbox: {write: [$WORK_DIR], network: [%d], required: true}}`, probe, port))
	a := load(t, path, opts)

	for _, tc := range []struct {
		name, tool, target string
		child              bool
		refused            bool
	}{
		{"write inside", "Write", filepath.Join(opts.WorkDir, "in.txt"), false, false},
		{"write outside", "Write", filepath.Join(outside, "out.txt"), false, true},
		{"child writes inside", "Write", filepath.Join(opts.WorkDir, "child.txt"), true, false},
		{"child writes outside", "Write", filepath.Join(outside, "child.txt"), true, true},
		{"connect to an allowed port", "Dial", allowed, false, false},
		{"connect to a forbidden port", "Dial", forbidden, false, true},
		{"child connects to an allowed port", "Dial", allowed, true, false},
		{"child connects to a forbidden port", "Dial", forbidden, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, a, tc.tool, fmt.Sprintf(`{"target": %q, "child": %v}`, tc.target, tc.child))
			switch {
			case tc.refused && !r.IsError():
				t.Fatalf("%s %s succeeded in the sandbox", tc.tool, tc.target)
			case tc.refused && !strings.Contains(strings.ToLower((r.Message+r.OutputText())), "permission denied"):
				t.Fatalf("%s %s: want permission denied, got %q", tc.tool, tc.target, (r.Message + r.OutputText()))
			case !tc.refused && r.IsError():
				t.Fatalf("%s %s refused: %s", tc.tool, tc.target, (r.Message + r.OutputText()))
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); err == nil {
		t.Error("the refused write left a file outside the sandbox")
	}
	r := call(t, a, "Sandbox", `{}`)
	if got := r.OutputText(); !strings.Contains(got, `"plugin":"sandboxprobe"`) || !strings.Contains(got, strconv.Quote(opts.WorkDir)) {
		t.Errorf("the plugin's %s = %q, want its policy", sandbox.EnvVar, got)
	}
}

// A network: none sandbox refuses every TCP connection; network: all none.
func TestSandboxNetworkModes(t *testing.T) {
	needLandlock(t, sandbox.NetworkABI)
	probe := build(t, "host/testdata/plugins/sandboxprobe")
	addr, _ := listen(t)
	for _, tc := range []struct {
		network string
		refused bool
	}{{"none", true}, {"all", false}} {
		t.Run(tc.network, func(t *testing.T) {
			a := load(t, writeAgent(t, fmt.Sprintf(`{plugin: %q, sandbox: {network: %s}}`, probe, tc.network)), sandboxOptions(t))
			if r := call(t, a, "Dial", fmt.Sprintf(`{"target": %q}`, addr)); r.IsError() != tc.refused {
				t.Fatalf("network: %s: Dial %s: %s (error %v)", tc.network, addr, (r.Message + r.OutputText()), r.IsError())
			}
		})
	}
}

// A sandbox path that does not exist fails the load, naming the file, the
// tool reference and the path.
func TestSandboxPathMustExist(t *testing.T) {
	probe := build(t, "host/testdata/plugins/sandboxprobe")
	for _, tc := range []struct{ name, block, want string }{
		{"relative", `{write: [./nope]}`, "write path "},
		{"variable", `{read: ["$WORK_DIR/nope"]}`, "read path $WORK_DIR/nope ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeAgent(t, fmt.Sprintf(`{plugin: %q, sandbox: %s}`, probe, tc.block))
			_, err := agent.Load(context.Background(), path, sandboxOptions(t))
			if err == nil {
				t.Fatal("loaded an agent whose sandbox path does not exist")
			}
			msg := err.Error()
			for _, want := range []string{path + ":", fmt.Sprintf(`sandbox of tools entry %q`, probe), tc.want, "nope", "does not exist"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

// Without Landlock a required sandbox refuses to run the plugin; another
// runs it unconfined with a warning, logged once.
func TestSandboxWithoutLandlock(t *testing.T) {
	probe := build(t, "host/testdata/plugins/sandboxprobe")
	saved := *agent.LandlockABI
	*agent.LandlockABI = func() int { return 0 }
	t.Cleanup(func() { *agent.LandlockABI = saved })

	_, err := agent.Load(context.Background(), writeAgent(t, fmt.Sprintf(`{plugin: %q, sandbox: {required: true}}`, probe)), sandboxOptions(t))
	if err == nil || !strings.Contains(err.Error(), "sandbox required but this kernel has no Landlock") {
		t.Fatalf("required sandbox without Landlock: %v", err)
	}

	var logs bytes.Buffer
	opts := sandboxOptions(t)
	opts.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
	for range 2 {
		a := load(t, writeAgent(t, fmt.Sprintf(`{plugin: %q, sandbox: {}}`, probe)), opts)
		if r := call(t, a, "Sandbox", `{}`); r.IsError() || r.OutputText() != "" {
			t.Fatalf("unconfined plugin sees sandbox %q", (r.Message + r.OutputText()))
		}
	}
	// Another test may have logged it first in this process; never twice.
	if n := strings.Count(logs.String(), "no Landlock"); n > 1 {
		t.Errorf("warned %d times:\n%s", n, logs.String())
	}
}

// A host that cannot launch through sandbox-exec refuses a required
// sandbox.
func TestSandboxWithoutWrapper(t *testing.T) {
	probe := build(t, "host/testdata/plugins/sandboxprobe")
	opts := sandboxOptions(t)
	opts.SandboxExec = ""
	_, err := agent.Load(context.Background(), writeAgent(t, fmt.Sprintf(`{plugin: %q, sandbox: {required: true}}`, probe)), opts)
	if err == nil || !strings.Contains(err.Error(), "sandbox required") {
		t.Fatalf("required sandbox without a wrapper: %v", err)
	}
}

// The sha256 pin of a sandboxed plugin checks the plugin's binary, not the
// wrapper it is launched through.
func TestSandboxPinChecksThePlugin(t *testing.T) {
	needLandlock(t, 1)
	probe := build(t, "host/testdata/plugins/sandboxprobe")
	sum, err := pins.FileSHA256(probe)
	if err != nil {
		t.Fatal(err)
	}
	a := load(t, writeAgent(t, fmt.Sprintf(`{plugin: %q, sha256: %s, sandbox: {}}`, probe, sum)), sandboxOptions(t))
	if r := call(t, a, "Sandbox", `{}`); r.OutputText() == "" {
		t.Fatal("the pinned plugin runs unconfined")
	}
	wrong := strings.Repeat("0", 64)
	_, err = agent.Load(context.Background(), writeAgent(t, fmt.Sprintf(`{plugin: %q, sha256: %s, sandbox: {}}`, probe, wrong)), sandboxOptions(t))
	if err == nil || !strings.Contains(err.Error(), "sha256 mismatch for "+probe) {
		t.Fatalf("wrong pin: %v", err)
	}
}
