//go:build unix

package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

func TestDescribe(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	spec := h.Describe(t)[0]
	if spec.Timeout != toolTimeout || toolTimeout <= maxTimeout*time.Second {
		t.Fatalf("default timeout = %s, must exceed %ds", spec.Timeout, maxTimeout)
	}
	if caps := spec.Capabilities; len(caps) != 4 || caps[0] != "Approval" || caps[1] != "Environment" || caps[2] != "Session" || caps[3] != "Terminal" {
		t.Fatalf("capabilities = %v", caps)
	}
}

func TestShell(t *testing.T) {
	tests := []struct {
		name     string
		approver plugintest.Approver
		args     string
		kind     pluginsdk.ResultKind
		output   string
		message  string
		feedback string
	}{
		{"stdout and stderr combined in order", nil,
			`{"command": "echo out; echo err >&2; echo out2"}`, pluginsdk.KindOk, "out\nerr\nout2\n", "", ""},
		{"runs in the work dir", nil, `{"command": "cat marker.txt"}`, pluginsdk.KindOk, "in the work dir", "", ""},
		{"no output", nil, `{"command": "true"}`, pluginsdk.KindOk, "", "Command executed successfully.", ""},
		{"stdin is empty", nil, `{"command": "cat; echo end"}`, pluginsdk.KindOk, "end\n", "", ""},
		{"non-zero exit code", nil, `{"command": "echo oops; exit 3"}`, pluginsdk.KindError, "oops\n", "Command failed with exit code 3", ""},
		{"exit code 1", nil, `{"command": "false"}`, pluginsdk.KindError, "", "Command failed with exit code 1", ""},
		{"timeout keeps what was printed", nil, `{"command": "echo started; exec sleep 30", "timeout": 1}`,
			pluginsdk.KindError, "started\n", "Command timed out after 1s", ""},
		{"rejected with feedback", plugintest.RejectAll("use make instead"), `{"command": "rm -rf build"}`,
			pluginsdk.KindRejected, "", "", "use make instead"},
		{"rejected without feedback", plugintest.RejectAll(""), `{"command": "echo hi"}`, pluginsdk.KindRejected, "", "", ""},
		{"empty command", nil, `{"command": "  "}`, pluginsdk.KindError, "", "The command is empty.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			if err := os.WriteFile(filepath.Join(work, "marker.txt"), []byte("in the work dir"), 0o644); err != nil {
				t.Fatal(err)
			}
			h := plugintest.New(t, plugintest.Options{WorkDir: work, Approver: tt.approver}, definitions()...)
			got := h.MustCall(t, "Shell", tt.args)
			if got.Kind != tt.kind || got.Text() != tt.output || got.Message != tt.message || got.Feedback != tt.feedback {
				t.Fatalf("got %+v", got)
			}
		})
	}
}

func TestApprovalAsked(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	h.MustCall(t, "Shell", `{"command": "echo hi"}`)
	got := h.Approvals()
	if len(got) != 1 || got[0].Action != "run command" || got[0].Description != "Run command `echo hi`" || got[0].ToolName != "Shell" {
		t.Fatalf("approvals = %+v", got)
	}
}

func TestRejectedCommandDoesNotRun(t *testing.T) {
	work := t.TempDir()
	h := plugintest.New(t, plugintest.Options{WorkDir: work, Approver: plugintest.RejectAll("")}, definitions()...)
	h.MustCall(t, "Shell", `{"command": "touch ran"}`)
	if _, err := os.Stat(filepath.Join(work, "ran")); !os.IsNotExist(err) {
		t.Fatalf("rejected command ran: %v", err)
	}
}

// TestTimeoutKillsGrandchild: the shell starts a grandchild in the
// background and waits; on timeout the whole process group must die.
func TestTimeoutKillsGrandchild(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	h := plugintest.New(t, plugintest.Options{WorkDir: work}, definitions()...)
	got := h.MustCall(t, "Shell", `{"command": "sleep 300 & echo $! > pid; echo waiting; wait", "timeout": 1}`)
	if got.Kind != pluginsdk.KindError || got.Message != "Command timed out after 1s" || got.Text() != "waiting\n" {
		t.Fatalf("got %+v", got)
	}
	waitGone(t, readPid(t, filepath.Join(work, "pid")))
}

// TestCancelKillsGrandchild: cancelling the call's context (the host
// cancelling the RPC) kills the process group too.
func TestCancelKillsGrandchild(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	h := plugintest.New(t, plugintest.Options{WorkDir: work}, definitions()...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, "Shell", `{"command": "sleep 300 & echo $! > pid.tmp; mv pid.tmp pid; wait", "timeout": 300}`)
		errc <- err
	}()
	pidFile := filepath.Join(work, "pid")
	poll(t, "the pid file", func() bool { _, err := os.Stat(pidFile); return err == nil })
	pid := readPid(t, pidFile)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: err = %v, want context.Canceled", err)
	}
	waitGone(t, pid)
}

// TestBackgroundProcessHoldingOutput: a background process that keeps the
// output pipe open must not make the call hang after the shell exits.
func TestBackgroundProcessHoldingOutput(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	h := plugintest.New(t, plugintest.Options{WorkDir: work}, definitions()...)
	start := time.Now()
	got := h.MustCall(t, "Shell", `{"command": "sleep 300 & echo $! > pid; echo done", "timeout": 60}`)
	pid := readPid(t, filepath.Join(work, "pid"))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if got.Kind != pluginsdk.KindOk || got.Text() != "done\n" || !strings.Contains(got.Message, "background process") {
		t.Fatalf("got %+v", got)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("call took %v", d)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitGone waits until pid no longer runs (gone, or a zombie nobody reaps).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	poll(t, fmt.Sprintf("process %d to die", pid), func() bool { return !alive(pid) })
}

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill
	}
	// The state is the field after the parenthesised command name.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// poll waits for cond with a generous bound; it is no synchronisation by
// sleeping, only a bounded wait for something another process does.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
