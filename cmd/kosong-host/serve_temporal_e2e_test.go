package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/host/temporalengine/temporaltest"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// temporalServe is a Temporal dev server, a worker of the test's model
// in dir, and the arguments and environment of serve --engine temporal.
type temporalServe struct {
	dir, hostPort string
	env, args     []string
}

func startTemporalServe(t *testing.T, model *openaitest.Server) temporalServe {
	t.Helper()
	return startTemporalServeAgent(t, model, shellAgent)
}

// startTemporalServeAgent is startTemporalServe with the workers' agent file.
func startTemporalServeAgent(t *testing.T, model *openaitest.Server, agentYAML string) temporalServe {
	t.Helper()
	srv := temporaltest.Start(t)
	dir := writeFiles(t, map[string]string{"agent.yaml": agentYAML, "s.md": "hi"})
	const q = "serve"
	startWorker(t, dir, srv.HostPort, q, []string{"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + model.BaseURL()})
	return temporalServe{dir: dir, hostPort: srv.HostPort,
		env:  []string{"XDG_STATE_HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir()},
		args: []string{"--engine", "temporal", "--temporal", srv.HostPort, "--task-queue", q}}
}

// session starts serve on ts and creates a session in mode: the test's
// deadline, the serve process, the session and its event stream.
func (ts temporalServe) session(t *testing.T, mode string) (context.Context, *serveProc, serverclient.Session, *eventReader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*expectWithin)
	t.Cleanup(cancel)
	p := startServe(t, ts.dir, ts.env, ts.args...)
	sess, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: ts.dir, Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, p, sess, p.events(sess.ID, 0)
}

func shellCall(id, command string) openaitest.Response {
	args, _ := json.Marshal(map[string]any{"command": command, "timeout": 60})
	return openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: id, Name: "Shell", Arguments: string(args)}}}
}

// historyToolText is the text of the tool message of call id in h.
func historyToolText(h serverclient.History, id string) string {
	for _, m := range h.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Text
		}
	}
	return ""
}

// TestServeTemporalReattach: serve --engine temporal runs a session's
// turn on a worker; the serve process SIGKILLed mid-turn, a new one on
// the same state folder lists the session, a client reattaches by
// session id, and the turn that ran on meanwhile ends with its events
// and its tool result in the history.
func TestServeTemporalReattach(t *testing.T) {
	model := openaitest.NewServer(t,
		shellCall("call_slow", "touch started.txt; sleep 4; echo shell-done"),
		openaitest.Response{Text: []string{"all done"}},
	)
	ts := startTemporalServe(t, model)
	ctx, cancel := context.WithTimeout(context.Background(), 3*expectWithin)
	defer cancel()

	a := startServe(t, ts.dir, ts.env, ts.args...)
	sess, err := a.api.CreateSession(ctx, serverclient.CreateSession{Cwd: ts.dir, Mode: serverclient.ModeYolo})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Engine != "temporal" || sess.Status != serverclient.StatusIdle {
		t.Fatalf("the new session: %+v", sess)
	}
	evs := a.events(sess.ID, 0)
	if _, err := a.api.Send(ctx, sess.ID, serverclient.Message{Text: "run it"}); err != nil {
		t.Fatal(err)
	}
	evs.until("tool_call", nil)
	waitUntil(t, "the Shell call starts on the worker", func() bool {
		_, err := os.Stat(filepath.Join(ts.dir, "started.txt"))
		return err == nil
	})
	_ = a.cmd.Process.Kill()
	<-a.exited
	evs.close() // it would reconnect: what it read before is what it saw
	for ev := range evs.ch {
		evs.seen = append(evs.seen, ev)
	}
	seen := evs.seen[len(evs.seen)-1].Seq

	b := startServe(t, ts.dir, ts.env, ts.args...)
	list, err := b.api.Sessions(ctx)
	if err != nil || len(list) != 1 || list[0].ID != sess.ID || list[0].Engine != "temporal" {
		t.Fatalf("the restarted server lists %+v, %v", list, err)
	}
	again := b.events(sess.ID, seen)
	res := again.until("tool_result", nil)
	if res["id"] != "call_slow" || !strings.Contains(res["output"].(string), "shell-done") {
		t.Errorf("tool_result %v", res)
	}
	end := again.until("turn_end", nil)
	if end["reason"] != "done" || end["steps"] != float64(2) {
		t.Errorf("turn_end %v", end)
	}
	for _, ev := range again.seen {
		if ev.Seq <= seen {
			t.Errorf("event %d (%s) is not after %d, where the client left off", ev.Seq, ev.Type, seen)
		}
	}
	// The restarted server goes on from its feed's cursor: no event of
	// the turn is lost or logged twice.
	count := map[string]int{}
	for _, ev := range append(evs.seen, again.seen...) {
		count[ev.Type]++
	}
	for typ, n := range map[string]int{"turn_start": 1, "step_start": 2, "tool_call": 1, "tool_result": 1, "turn_end": 1} {
		if count[typ] != n {
			t.Errorf("%d %s events, want %d; seen %s then %s", count[typ], typ, n, typesOf(evs.seen), typesOf(again.seen))
		}
	}
	h, err := b.api.History(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := historyToolText(h, "call_slow"); !strings.Contains(got, "shell-done") {
		t.Errorf("the history's tool result %q, want the Shell call's output", got)
	}
	if n := len(h.Messages); n != 4 || h.Messages[3].Text != "all done" {
		t.Errorf("history %+v", h.Messages)
	}
	waitUntil(t, "the session is idle after its turn", func() bool {
		got, err := b.api.Session(ctx, sess.ID)
		return err == nil && got.Status == serverclient.StatusIdle
	})
}

// TestServeTemporalApprovals: a turn waiting for an approval shows an
// approval_request to the server's clients; answered through the API it
// resumes (a second answer is refused: the first wins). The approvals
// command lists a pending one and answers it; the server's clients see it
// answered elsewhere, and the turn goes on.
func TestServeTemporalApprovals(t *testing.T) {
	model := openaitest.NewServer(t,
		shellCall("call_one", "touch one.txt && echo first-run"),
		openaitest.Response{Text: []string{"first done"}},
		shellCall("call_two", "touch two.txt && echo second-run"),
		openaitest.Response{Text: []string{"second done"}},
	)
	ts := startTemporalServe(t, model)
	ctx, p, sess, evs := ts.session(t, serverclient.ModeAsk)

	// Answered through the server's API.
	if _, err := p.api.Send(ctx, sess.ID, serverclient.Message{Text: "one"}); err != nil {
		t.Fatal(err)
	}
	req := evs.until("approval_request", nil)
	rid, _ := req["request_id"].(string)
	if req["tool_call_id"] != "call_one" || req["tool"] != "Shell" || rid == "" {
		t.Fatalf("approval_request %v", req)
	}
	if _, err := os.Stat(filepath.Join(ts.dir, "one.txt")); err == nil {
		t.Fatal("the Shell call ran before it was approved")
	}
	if _, err := p.api.AnswerApproval(ctx, sess.ID, rid, serverclient.ApprovalAnswer{Decision: serverclient.DecisionOnce}); err != nil {
		t.Fatal(err)
	}
	var apiErr *serverclient.Error
	if _, err := p.api.AnswerApproval(ctx, sess.ID, rid, serverclient.ApprovalAnswer{Decision: serverclient.DecisionReject}); !errors.As(err, &apiErr) || apiErr.Status != 409 {
		t.Errorf("a second answer: %v, want 409", err)
	}
	evs.until("request_answered", func(m map[string]any) bool { return m["request_id"] == rid && m["decision"] == "once" })
	res := evs.until("tool_result", nil)
	if res["id"] != "call_one" || !strings.Contains(res["output"].(string), "first-run") {
		t.Errorf("tool_result %v", res)
	}
	evs.until("turn_end", func(m map[string]any) bool { return m["reason"] == "done" })

	// Answered with the approvals command.
	if a, err := p.api.Send(ctx, sess.ID, serverclient.Message{Text: "two"}); err != nil || a.Status == serverclient.MessageSteered {
		t.Fatalf("the second message: %+v, %v", a, err)
	}
	req = evs.until("approval_request", nil)
	if req["tool_call_id"] != "call_two" {
		t.Fatalf("approval_request %v", req)
	}
	temporalArgs := []string{"approvals", "--temporal", ts.hostPort, sess.ID}
	r := runHost(t, ts.dir, "", temporalArgs...)
	if r.code != 0 || !strings.Contains(r.stdout, "call_two") || !strings.Contains(r.stdout, "Shell") {
		t.Fatalf("approvals: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = runHost(t, ts.dir, "", append(temporalArgs, "call_two", "reject", "--feedback", "not that one")...)
	if r.code != 0 {
		t.Fatalf("approvals reject: exit %d\nstderr %s", r.code, r.stderr)
	}
	evs.until("request_answered", func(m map[string]any) bool {
		return m["request_id"] == req["request_id"] && m["decision"] == "answered_elsewhere"
	})
	res = evs.until("tool_result", nil)
	if res["id"] != "call_two" || res["status"] != "rejected" || res["feedback"] != "not that one" {
		t.Errorf("tool_result of the rejected call %v", res)
	}
	evs.until("turn_end", nil)
	if _, err := os.Stat(filepath.Join(ts.dir, "two.txt")); err == nil {
		t.Error("the rejected Shell call ran")
	}
	r = runHost(t, ts.dir, "", append(temporalArgs, "call_two", "approve")...)
	if r.code != 1 || !strings.Contains(r.stderr, "session "+sess.ID+": request call_two: no such approval is pending") {
		t.Errorf("answering again: exit %d\nstderr %s", r.code, r.stderr)
	}
	r = runHost(t, ts.dir, "", temporalArgs...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "" || !strings.Contains(r.stderr, "waits for no approval") {
		t.Errorf("approvals with none pending: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}

// TestServeTemporalFlagErrors: bad engine flags of serve and bad
// arguments of approvals are one-line usage errors (exit 2).
func TestServeTemporalFlagErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": shellAgent, "s.md": "hi"})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"serve without a server", []string{"serve", "--listen", "127.0.0.1:0", "--engine", "temporal"}, "--engine temporal needs --temporal HOST:PORT"},
		{"serve with an unknown engine", []string{"serve", "--listen", "127.0.0.1:0", "--engine", "cloud"}, `invalid --engine "cloud": use inprocess or temporal`},
		{"serve with a short heartbeat", []string{"serve", "--listen", "127.0.0.1:0", "--engine", "temporal", "--temporal", "127.0.0.1:1", "--heartbeat-timeout", "10ms"}, "invalid --heartbeat-timeout 10ms"},
		{"approvals without a session", []string{"approvals", "--temporal", "127.0.0.1:1"}, "usage: kosong-host approvals"},
		{"approvals without a decision", []string{"approvals", "--temporal", "127.0.0.1:1", "s1", "call_1"}, "usage: kosong-host approvals"},
		{"approvals with an unknown decision", []string{"approvals", "--temporal", "127.0.0.1:1", "s1", "call_1", "maybe"}, `invalid decision "maybe" for request call_1 of session s1`},
		{"approvals with feedback for an approval", []string{"approvals", "--temporal", "127.0.0.1:1", "s1", "call_1", "approve", "--feedback", "x"}, "--feedback goes with the decision reject"},
		{"approvals without a server", []string{"approvals", "s1"}, "--temporal HOST:PORT is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHost(t, dir, "", tt.args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) || len(lines) != 1 {
				t.Fatalf("exit %d, want 2 with one line %q\nstderr %s", r.code, tt.want, r.stderr)
			}
		})
	}
}
