package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func call(id, name, args string) providers.ToolCall {
	return providers.ToolCall{ID: id, Name: name, Arguments: args}
}

// events are a session's: one call approved by the user, one allowed by a
// rule, one denied, and one whose result never came (the host crashed).
func events() []loop.Event {
	ok := toolset.Result{Kind: toolset.Ok}
	return []loop.Event{
		loop.ToolCallStarted{Call: call("a", "Shell", `{"command":"secret words"}`)},
		loop.ApprovalDecided{ToolCallID: "a", ToolName: "Shell", Action: "run command", Approved: true, Answer: approval.AnswerUser},
		loop.ToolCallFinished{Call: call("a", "Shell", ""), Result: ok, Duration: 1500 * time.Millisecond},
		loop.ToolCallStarted{Call: call("r", "ReadFile", `{"path":"x"}`)},
		loop.PermissionDecided{ToolCallID: "r", ToolName: "ReadFile", Decision: "allow", Rule: "ReadFile(*)", Where: "agent.yaml"},
		loop.ToolCallFinished{Call: call("r", "ReadFile", ""), Result: ok},
		loop.ToolCallStarted{Call: call("d", "Shell", `{"command":"rm -rf /"}`)},
		loop.ApprovalDecided{ToolCallID: "d", ToolName: "Shell", Action: "run command", Answer: approval.AnswerUnattended},
		loop.ToolCallFinished{Call: call("d", "Shell", ""), Result: toolset.Result{Kind: toolset.Rejected}},
		loop.ToolCallStarted{Call: call("c", "Shell", `{"command":"sleep 100"}`)},
		loop.ApprovalDecided{ToolCallID: "c", ToolName: "Shell", Action: "run command", Approved: true, Answer: approval.AnswerYolo},
	}
}

func TestLog(t *testing.T) {
	for _, args := range []bool{false, true} {
		dir := t.TempDir()
		l, err := Open(dir, Options{Session: "s1", Agent: "main", Args: args})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events() {
			l.Observe(e)
		}
		// A line cut off by a crash is skipped.
		l.f.Write([]byte(`{"type":"result","call_id":"c","sta`))
		if err := l.Close(); err != nil || l.Err() != nil {
			t.Fatal(err, l.Err())
		}
		raw, _ := os.ReadFile(filepath.Join(dir, FileName))
		if got := strings.Contains(string(raw), "secret words"); got != args {
			t.Errorf("args opt-in %v: the arguments are in the log: %v\n%s", args, got, raw)
		}
		calls, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range calls {
			got = append(got, c.CallID+" "+c.Tool+" "+c.Decision()+" "+c.Status)
			if len(c.ArgsSHA256) != 64 {
				t.Errorf("call %s: hash %q", c.CallID, c.ArgsSHA256)
			}
		}
		want := []string{
			"a Shell approved (once, by user) ok",
			"r ReadFile approved (rule: ReadFile(*) (agent.yaml)) ok",
			"d Shell denied (unattended) rejected",
			"c Shell approved (yolo) ",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if calls[0].Duration != 1500*time.Millisecond {
			t.Errorf("duration %s", calls[0].Duration)
		}
	}
}

func TestOpenAndReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing"), Options{}); err == nil || !strings.Contains(err.Error(), "audit log") {
		t.Errorf("Open in a missing folder: %v", err)
	}
	if calls, err := Read(dir); err != nil || calls != nil {
		t.Errorf("Read of a session without a log: %v, %v", calls, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "x", FileName), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(filepath.Join(dir, "x")); err == nil || !strings.Contains(err.Error(), "audit log") {
		t.Errorf("Read of a folder: %v", err)
	}
}

// pinnedTool is a plugin's tool that says its pin.
type pinnedTool struct{ toolset.Tool }

func (pinnedTool) Spec() toolset.Spec              { return toolset.Spec{Name: "Shell", Source: "builtin shell"} }
func (pinnedTool) PluginPin() (plugin, pin string) { return "shell", "builtin v1.2.3" }

// TestPinsCrashesAndSessions: a call record carries its plugin and pin; a
// call whose plugin stopped is completed with status crashed and how; the
// same call id in two sessions of one log (a server's) are two calls.
func TestPinsCrashesAndSessions(t *testing.T) {
	dir := t.TempDir()
	server, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	find := func(string) (toolset.Tool, bool) { return pinnedTool{}, true }
	for _, sess := range []string{"s1", "s2"} {
		l, err := Open(t.TempDir(), Options{Session: sess, Find: find, Also: server})
		if err != nil {
			t.Fatal(err)
		}
		l.Observe(loop.ToolCallStarted{Call: call("c", "Shell", `{}`)})
		l.Observe(loop.ToolCallFinished{Call: call("c", "Shell", ""), Result: toolset.Result{Kind: toolset.Failed, Runtime: true,
			Crashed: true, Message: "plugin shell stopped during the call: panic: boom"}})
		l.Close()
	}
	server.Close()
	calls, err := Read(dir)
	if err != nil || len(calls) != 2 {
		t.Fatalf("calls %+v %v", calls, err)
	}
	for i, c := range calls {
		if c.Session != []string{"s1", "s2"}[i] || c.Plugin != "shell" || c.Pin != "builtin v1.2.3" || c.Status != "crashed" ||
			!strings.Contains(c.Error, "panic: boom") {
			t.Errorf("call %d: %+v", i, c)
		}
	}
}
