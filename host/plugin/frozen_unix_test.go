//go:build unix

package plugin_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

// TestFrozenPluginIsKilledAndReplaced: a plugin stopped by SIGSTOP after
// its load answers nothing; the timed-out call says so, the host kills the
// process once the grace period is over, and the next call is answered by
// a new process.
func TestFrozenPluginIsKilledAndReplaced(t *testing.T) {
	echo := build(t, "plugins/echo")
	const grace = time.Second
	sp := spec(echo)
	sp.CancelGrace, sp.Timeout = grace, time.Second
	ts, l := load(t, sp)
	first := l.Plugins[0].Current()
	pid := first.Pid()
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	if r := call(t, ts, "Echo", `{"text":"hi"}`); r.Message != "Tool Echo timed out after 1s" {
		t.Fatalf("frozen: %+v", r)
	}
	timedOut := time.Now()
	select {
	case <-first.Done():
	case <-time.After(bound):
		t.Fatal("the frozen plugin was not killed")
	}
	// Killed once the grace period was over, not later than a loaded
	// machine explains.
	if d := time.Since(timedOut); d > grace+10*time.Second {
		t.Fatalf("killed %s after the call timed out (grace %s)", d, grace)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the frozen plugin %d is still there: %v", pid, err)
	}
	if r := call(t, ts, "Echo", `{"text":"back"}`); r.OutputText() != "back" {
		t.Fatalf("after the kill: %+v", r)
	}
	second := l.Plugins[0].Current()
	if second == first || second.Pid() == pid {
		t.Fatal("the next call was not answered by a new process")
	}

	// Closing a frozen plugin does not wait for it.
	if err := syscall.Kill(second.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(bound):
		t.Fatal("Close waited on a frozen plugin")
	}
}

// TestCancelWhileWaitingForARestart: two calls wait on a plugin whose
// restart is held in its Load; cancelling one returns it at once, and the
// other is answered by the restarted plugin.
func TestCancelWhileWaitingForARestart(t *testing.T) {
	gated := build(t, "host/testdata/plugins/gated")
	gate := filepath.Join(t.TempDir(), "gate")
	sp := spec(gated)
	sp.Env = []string{"KOSONG_TEST_GATE"}
	sp.Getenv = func(k string) string {
		if k == "KOSONG_TEST_GATE" {
			return gate
		}
		return testEnv(k)
	}
	ts, l := load(t, sp)
	firstPid := l.Plugins[0].Current().Pid()
	// From now on, a Load waits for the gate.
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Unblock a test that failed before opening the gate.
		if f, err := os.OpenFile(gate, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	if r := call(t, ts, "Exit", `{}`); !r.Runtime {
		t.Fatalf("exit: %+v", r)
	}

	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	a := ts.Handle(ctxA, providers.ToolCall{ID: "a", Name: "Pid", Arguments: `{}`})
	b := ts.Handle(context.Background(), providers.ToolCall{ID: "b", Name: "Pid", Arguments: `{}`})
	// Opening the gate for writing returns once the restarted plugin is in
	// its Load, waiting on it.
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			close(opened)
			return
		}
		opened <- f
	}()
	var w *os.File
	select {
	case w = <-opened:
	case <-time.After(bound):
		t.Fatal("the plugin was not restarted")
	}
	if w == nil {
		t.FailNow()
	}
	cancelA()
	if r := result(t, a, "the cancelled call"); r.Message != "Error running tool: the call was cancelled: context canceled" {
		t.Fatalf("cancelled call: %+v", r)
	}
	select {
	case <-b.Done():
		t.Fatalf("the other call returned before the restart: %+v", b.Result())
	default:
	}
	w.Close() // the Load goes on
	r := result(t, b, "the other call")
	pid, err := strconv.Atoi(r.OutputText())
	if err != nil || pid == firstPid || pid != l.Plugins[0].Current().Pid() {
		t.Fatalf("the other call got %+v (first pid %d)", r, firstPid)
	}
}
