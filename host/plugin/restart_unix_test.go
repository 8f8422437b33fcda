//go:build unix

package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

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
