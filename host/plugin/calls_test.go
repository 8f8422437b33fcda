package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// waitFile waits, within bound, for a file the plugin writes.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(bound); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin never wrote %s", filepath.Base(path))
		}
	}
}

// TestStreamedCallsCancelAndTimeOut: calls go over the plugin's Calls
// stream, and both a cancelled call and a timed-out one end the tool's
// context in the plugin, which is kept.
func TestStreamedCallsCancelAndTimeOut(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	sp := spec(cc, "Linger")
	sp.Timeout = 300 * time.Millisecond
	ts := toolset.New(nil)
	state := t.TempDir()
	l := plugin.Load(context.Background(), []plugin.Spec{sp}, plugin.Options{WorkDir: t.TempDir(), StateDir: state,
		Decider: approval.Yolo{}})
	t.Cleanup(l.Close)
	if len(l.Failures) > 0 {
		t.Fatalf("load: %v", l.Failures)
	}
	if err := ts.Add(l.Status[0].Tool); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, "plugins", "capcheck")
	first := l.Plugins[0].Current()

	// Cancelled by the caller.
	ctx, cancel := context.WithCancel(context.Background())
	p := ts.Handle(ctx, providers.ToolCall{ID: "c1", Name: "Linger", Arguments: `{}`})
	waitFile(t, filepath.Join(dir, "started-c1"))
	if !first.Streaming() {
		t.Fatal("the call did not go over the Calls stream")
	}
	cancel()
	if r := result(t, p, "the cancelled call"); !r.IsError() {
		t.Fatalf("cancelled call = %+v", r)
	}
	waitFile(t, filepath.Join(dir, "cancelled-c1"))

	// Timed out by the tool's timeout.
	p = ts.Handle(context.Background(), providers.ToolCall{ID: "c2", Name: "Linger", Arguments: `{}`})
	if r := result(t, p, "the timed-out call"); !strings.Contains(r.Message, "timed out after 300ms") {
		t.Fatalf("timed-out call = %+v", r)
	}
	waitFile(t, filepath.Join(dir, "cancelled-c2"))
	if cur := l.Plugins[0].Current(); cur != first {
		t.Fatal("a plugin that answered after its calls ended was replaced")
	}
}

// TestPluginWithoutCallsStream: a plugin built before the Calls stream is
// called with the unary Call, and its calls are cancelled as before.
func TestPluginWithoutCallsStream(t *testing.T) {
	old := build(t, "host/testdata/plugins/unaryonly")
	ts, l := load(t, spec(old))
	if r := call(t, ts, "Echo", `{"text":"hi"}`); r.IsError() || r.OutputText() != `unary {"text":"hi"}` {
		t.Fatalf("unary call: %+v", r)
	}
	first := l.Plugins[0].Current()
	if first.Streaming() {
		t.Fatal("a plugin without the stream is said to stream")
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := ts.Handle(ctx, providers.ToolCall{ID: "w", Name: "Wait", Arguments: `{}`})
	cancel()
	if r := result(t, p, "the cancelled call"); !r.IsError() || !strings.Contains(r.Message, "cancelled") {
		t.Fatalf("cancelled call = %+v", r)
	}
	if r := call(t, ts, "Echo", `{"text":"again"}`); r.IsError() || l.Plugins[0].Current() != first {
		t.Fatalf("after the cancellation: %+v", r)
	}
}
