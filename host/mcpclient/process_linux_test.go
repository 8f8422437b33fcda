package mcpclient_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/supervise"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// running reports whether pid is a live process (not gone, not a zombie).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) STATE ...
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestCloseKillsProcessGroup: closing a stdio server kills what it started.
func TestCloseKillsProcessGroup(t *testing.T) {
	ts, l := load(t, options(approval.Yolo{}), stdio(t, "test"))
	r := call(context.Background(), ts, "test__spawn", `{}`)
	pid, err := strconv.Atoi(r.OutputText())
	if err != nil || !running(pid) {
		t.Fatalf("spawn: %+v", r)
	}
	server := l.Servers[0]
	l.Close()
	deadline := time.Now().Add(20 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the server's child %d outlived Close of %s", pid, server.Name())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertGone fails unless the process pid (in decimal) is gone.
func assertGone(t *testing.T, pid string) {
	t.Helper()
	n, err := strconv.Atoi(pid)
	if err != nil {
		t.Fatalf("pid %q", pid)
	}
	if running(n) {
		syscall.Kill(n, syscall.SIGKILL)
		t.Fatalf("process %d is still running", n)
	}
}

// TestFrozenServerIsKilledAndRestarted: a stdio server that stops reading
// (and ignores SIGTERM) answers nothing; the timed-out call says so, the
// host kills the server once the grace period is over, and the next call is
// answered by a new process.
func TestFrozenServerIsKilledAndRestarted(t *testing.T) {
	cfg := stdio(t, "test")
	cfg.Timeout = time.Second
	opts := options(approval.Yolo{})
	opts.CancelGrace = time.Second
	ts, _ := load(t, opts, cfg)
	first := call(context.Background(), ts, "test__pid", `{}`).OutputText()

	r := call(context.Background(), ts, "test__freeze", `{}`)
	if r.Kind != toolset.Failed || r.Message != "MCP tool test__freeze timed out after 1s without progress" {
		t.Fatalf("freeze: %+v", r)
	}
	timedOut := time.Now()
	// The next call waits for the verdict on the frozen server, and is
	// answered by a new one.
	second := call(context.Background(), ts, "test__pid", `{}`)
	if second.IsError() || second.OutputText() == first || first == "" {
		t.Fatalf("after the freeze: %+v (first pid %s)", second, first)
	}
	if d := time.Since(timedOut); d < opts.CancelGrace || d > opts.CancelGrace+20*time.Second {
		t.Fatalf("restarted %s after the timeout (grace %s)", d, opts.CancelGrace)
	}
	assertGone(t, first)
}

// TestResendToADeadServer: a call whose request could not be sent to a
// stdio server that died (killed here, behind the client's back) restarts
// the server and is sent once more; a call the server received before it
// died is not sent again.
func TestResendToADeadServer(t *testing.T) {
	ts, _ := load(t, options(approval.Yolo{}), stdio(t, "test"))
	for i := range 2 { // (the restart policy allows 3 a minute)
		r := call(context.Background(), ts, "test__pid", `{}`)
		pid, err := strconv.Atoi(strings.TrimSpace(r.OutputText()))
		if err != nil {
			t.Fatalf("pid: %+v", r)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The server is dead; the client may not have seen it go.
		for running(pid) {
			time.Sleep(5 * time.Millisecond)
		}
		r = call(context.Background(), ts, "test__echo", `{"text":"again"}`)
		if r.Kind != toolset.Ok || r.OutputText() != "again" {
			t.Fatalf("round %d: the call after the server died: %+v", i, r)
		}
	}
	r := call(context.Background(), ts, "test__crash", `{}`)
	if !strings.Contains(r.Message, "stopped during the call") {
		t.Fatalf("crash: %+v", r)
	}
}

// TestCallAfterCrash: a call right after a stdio server died between
// calls restarts it and succeeds when its request never reached the
// server: a server that stops reading after each call and exits a moment
// later leaves the next request unread in its stdin; one killed and gone
// cannot be written to, or was seen gone.
func TestCallAfterCrash(t *testing.T) {
	tests := []struct {
		name string
		args []string
		kill bool
	}{
		{"exits after each call", []string{"-exit-after-call"}, false},
		{"killed between calls", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := load(t, options(approval.Yolo{}), stdio(t, "test", tt.args...))
			r := call(context.Background(), ts, "test__pid", `{}`)
			pids := map[string]bool{r.OutputText(): true}
			// One call after each stop the restart policy allows.
			for i := 0; i < supervise.MaxRestarts; i++ {
				pid, err := strconv.Atoi(r.OutputText())
				if err != nil {
					t.Fatalf("pid %+v", r)
				}
				if tt.kill {
					if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					waitFor(t, "the server to die", func() bool { return !running(pid) })
				}
				if r = call(context.Background(), ts, "test__pid", `{}`); r.IsError() {
					t.Fatalf("call %d after a stop: %+v", i, r)
				}
				pids[r.OutputText()] = true
			}
			if len(pids) != supervise.MaxRestarts+1 {
				t.Fatalf("pids %v: want %d servers", pids, supervise.MaxRestarts+1)
			}
		})
	}
}
