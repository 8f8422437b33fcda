package plugin_test

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFrozenPluginIsKilledAndReplaced: a plugin stopped by SIGSTOP after
// its load answers nothing; the timed-out call says so, the host kills the
// process once the grace period is over, and the next call is answered by
// a new process.
func TestFrozenPluginIsKilledAndReplaced(t *testing.T) {
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	const grace = time.Second
	sp := spec(echo)
	sp.CancelGrace, sp.Timeout = grace, time.Second
	ts, l := load(t, sp)
	first := l.Plugins[0].Current()
	pid := first.Pid()
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	stop(t, pid)

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
	stop(t, second.Pid())
	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(bound):
		t.Fatal("Close waited on a frozen plugin")
	}
}

// stop sends SIGSTOP to pid and waits until the process is stopped: kill(2)
// may return before every thread of the target has stopped.
func stop(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(bound)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		// pid (comm) STATE ...
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && (s[i+2] == 'T' || s[i+2] == 't') {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not stop", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
