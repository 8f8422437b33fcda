package mcpclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/mcpclient"
	"github.com/kosong-host/kosong-host/host/spec"
)

// TestStartupTimeouts: a hung server fails after its own startup_timeout;
// the load returns after StartupWait with the servers that are up, and a
// slow one is delivered later, with its tools, through Late.
func TestStartupTimeouts(t *testing.T) {
	hung := stdio(t, "hung", "-hang")
	hung.StartupTimeout = 300 * time.Millisecond
	// Bounds with room for a loaded 2-core machine: the fast server is up
	// well within StartupWait, the slow one well after it.
	slow := stdio(t, "slow", "-slow-start", "6s")
	slow.EnabledTools = []string{"echo"}
	fast := stdio(t, "fast")
	fast.EnabledTools = []string{"echo"}
	opts := options(approval.Yolo{})
	opts.StartupWait = 3 * time.Second
	start := time.Now()
	l := mcpclient.LoadAll(context.Background(), []spec.MCPServer{hung, slow, fast}, opts)
	t.Cleanup(l.Close)
	took := time.Since(start)
	var got []string
	for _, st := range l.Status {
		s := st.Server + ":" + st.Name
		if st.Err != nil {
			s += " failed: " + st.Err.Error()
		}
		got = append(got, s)
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "hung: failed: MCP server hung: no answer to the MCP handshake within 300ms") || got[1] != "fast:fast__echo" {
		t.Fatalf("status after %s: %q", took, got)
	}
	late := make(chan *mcpclient.Loaded, 1)
	l.Late(func(one *mcpclient.Loaded) { late <- one })
	select {
	case one := <-late:
		if len(one.Status) != 1 || one.Status[0].Name != "slow__echo" || one.Status[0].Tool == nil {
			t.Fatalf("late: %+v", one.Status)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the slow server was not delivered")
	}
	if err := l.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(l.Servers) != 1 || len(l.All()) != 2 {
		t.Fatalf("servers: %d, all %d; want fast, then fast and slow", len(l.Servers), len(l.All()))
	}
}

// TestTaskRequiredToolsLeftOut: a tool whose execution.taskSupport is
// "required" is not loaded, with the reason; the others are.
func TestTaskRequiredToolsLeftOut(t *testing.T) {
	cfg := stdio(t, "test", "-tasks")
	cfg.EnabledTools = []string{"echo", "tasky"}
	_, l := load(t, options(approval.Yolo{}), cfg)
	var got []string
	for _, st := range l.Status {
		s := st.Name
		if st.Err != nil {
			s += ": " + st.Err.Error()
		}
		got = append(got, s)
	}
	want := []string{"test__echo", "test__tasky: MCP tool tasky of server test requires task augmentation (execution.taskSupport: required), which kosong-host does not support yet; it is left out"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("status %q\nwant %q", got, want)
	}
}
