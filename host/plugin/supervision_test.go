package plugin_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/providers"
)

func TestCrashRestartAndDown(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	ts, _ := load(t, spec(echo), spec(cc, "Crash", "Sleep"))

	r := call(t, ts, "Crash", `{}`)
	if !r.Runtime || !r.Crashed || !strings.Contains(r.Message, "plugin capcheck stopped during the call: panic: the disk is on fire") {
		t.Fatalf("crash result: %+v", r)
	}
	if r := call(t, ts, "Echo", `{"text":"unaffected"}`); r.OutputText() != "unaffected" {
		t.Fatalf("other plugin: %+v", r)
	}
	if r := call(t, ts, "Sleep", `{"ms":1}`); r.IsError() {
		t.Fatalf("after one crash the plugin is restarted: %+v", r)
	}
	// Two more restarts are allowed in the window; each is crashed again.
	for i := range 3 {
		if r := call(t, ts, "Crash", `{}`); !strings.Contains(r.Message, "stopped during the call") {
			t.Fatalf("crash %d: %+v", i+2, r)
		}
	}
	r = call(t, ts, "Sleep", `{"ms":1}`)
	if !strings.Contains(r.Message, "plugin capcheck is down: it stopped: panic: the disk is on fire") || !strings.Contains(r.Message, "restarted 3 times in 1m0s") {
		t.Fatalf("after 3 restarts: %+v", r)
	}
	if r := call(t, ts, "Echo", `{"text":"still fine"}`); r.OutputText() != "still fine" {
		t.Fatalf("other plugin after the first went down: %+v", r)
	}
}

// TestHungToolTimesOutAndPluginRestarts: a tool that ignores its cancelled
// context in a plugin that still answers: past the grace period the SDK
// takes the plugin down, and the next call gets a new process.
func TestHungToolTimesOutAndPluginRestarts(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	sp := spec(cc, "Stuck", "Sleep")
	sp.CancelGrace, sp.Timeout = 300*time.Millisecond, time.Second
	ts, l := load(t, sp)
	first := l.Plugins[0].Current()

	if r := call(t, ts, "Stuck", `{}`); r.Message != "Tool Stuck timed out after 1s" {
		t.Fatalf("stuck: %+v", r)
	}
	select {
	case <-first.Done():
	case <-time.After(bound):
		t.Fatal("the plugin of a stuck tool was not stopped")
	}
	if r := call(t, ts, "Sleep", `{"ms":1}`); r.IsError() {
		t.Fatalf("after restart: %+v", r)
	}
	if l.Plugins[0].Current() == first {
		t.Fatal("the plugin was not restarted")
	}
}

func TestCancelReachesThePlugin(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	ts, l := load(t, spec(cc, "Sleep"))
	first := l.Plugins[0].Current()
	ctx, cancel := context.WithCancel(context.Background())
	p := ts.Handle(ctx, providers.ToolCall{ID: "c1", Name: "Sleep", Arguments: `{"ms": 600000}`})
	cancel()
	if r := result(t, p, "the cancelled call"); !r.IsError() {
		t.Fatalf("cancelled call = %+v", r)
	}
	// The plugin answered after the cancellation: it is kept.
	if r := call(t, ts, "Sleep", `{"ms":1}`); r.IsError() || l.Plugins[0].Current() != first {
		t.Fatalf("after the cancellation: %+v", r)
	}
}

func TestFloodIsBounded(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	ts, _ := load(t, spec(cc, "Flood", "FloodImage", "Logs"))

	r := call(t, ts, "Flood", `{"mb":100}`)
	if r.IsError() || len(r.OutputText()) > 60_000 || !strings.Contains(r.Message, "truncated") {
		t.Fatalf("100 MB output: kind %v, %d chars, message %q", r.Kind, len(r.OutputText()), r.Message)
	}
	r = call(t, ts, "FloodImage", `{"mb":20}`)
	if !r.IsError() || !strings.Contains(r.Message, "exceeds the size limit") {
		t.Fatalf("20 MB image: %+v", r.Message)
	}
	if r := call(t, ts, "Logs", `{"lines":200000}`); r.OutputText() != "logged" {
		t.Fatalf("logs: %+v", r)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > 256<<20 {
		t.Fatalf("host heap %d MB after the flood", ms.HeapAlloc>>20)
	}
}

// TestThousandConcurrentCalls: none lost, none mixed up.
func TestThousandConcurrentCalls(t *testing.T) {
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	cc := build(t, "host/testdata/plugins/capcheck")
	ts, _ := load(t, spec(echo), spec(cc, "Whoami", "Sleep"))

	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("call-%d", i)
			var c providers.ToolCall
			switch i % 3 {
			case 0:
				c = providers.ToolCall{ID: id, Name: "Echo", Arguments: fmt.Sprintf(`{"text":"msg-%d"}`, i)}
			case 1:
				c = providers.ToolCall{ID: id, Name: "Whoami", Arguments: `{}`}
			default:
				c = providers.ToolCall{ID: id, Name: "Sleep", Arguments: `{"ms":5}`}
			}
			r := ts.Handle(context.Background(), c).Result()
			switch {
			case r.ToolCallID != id || r.IsError():
				errs <- fmt.Sprintf("%s: id %s, %s", id, r.ToolCallID, r.Message)
			case i%3 == 0 && r.OutputText() != fmt.Sprintf("msg-%d", i):
				errs <- fmt.Sprintf("%s: echo got %q", id, r.OutputText())
			case i%3 == 1 && !strings.Contains(r.OutputText(), `"call_id":"`+id+`"`):
				errs <- fmt.Sprintf("%s: whoami saw %s", id, r.OutputText())
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
