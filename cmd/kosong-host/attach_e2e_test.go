//go:build unix

package main_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kosong-host/kosong-host/host/serverclient"
)

// attachScript is each session's model: an answer, a command that asks
// for approval, an answer, then a slow answer to detach during.
const attachScript = `
turns:
  - text: "Hello from the server."
  - tool_calls: [{id: c1, name: Shell, arguments: {command: "echo attached > attached.txt"}}]
  - text: "Ran the command."
  - text: "one two three four five six seven eight nine ten"
    delay: 300ms
  - text: "Still here."
`

// onlySession is the id of the server's one session.
func (s *testServer) onlySession(t *testing.T) serverclient.Session {
	t.Helper()
	list, err := s.Client.Sessions(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v %+v", err, list)
	}
	return list[0]
}

// TestTerminalAttached: run --server is the terminal on a server's
// session: the answer streams, an approval is asked with a key and the
// command runs in the session's folder; a terminal killed mid-turn leaves
// the turn running; --session attaches again and replays what it missed;
// /exit detaches and the session stays.
func TestTerminalAttached(t *testing.T) {
	srv := startScriptedServer(t, attachScript)
	work := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + srv.State}
	term := startTerminal(t, work, env, "run", "--server", srv.URL)
	term.Expect("server " + srv.URL)
	term.Expect("/help for commands")
	term.Send("hi\r")
	term.Expect("Hello from the server.")
	term.Send("run it\r")
	term.Expect("Shell wants approval to run command")
	term.Expect("[1] approve once")
	term.Send("1")
	term.Expect("Ran the command.")
	if !fileExists(filepath.Join(work, "attached.txt")) {
		t.Fatalf("the approved command did not run in the session's folder:\n%s", term.Output())
	}
	term.Send("/compact\r")
	term.Expect("/compact is not available in a session on a server")

	sess := srv.onlySession(t)
	term.Send("count slowly\r")
	term.Expect("one two")
	_ = term.cmd.Process.Kill() // the client goes away mid-turn
	srv.waitEvent(t, sess.ID, "turn_end", func(ev serverclient.Event) bool { return ev.Seq > sess.LastSeq })

	again := startTerminal(t, work, env, "run", "--server", srv.URL, "--session", sess.ID)
	again.Expect("session   " + sess.ID)
	again.Expect("Hello from the server.") // replayed
	again.Expect("nine ten")               // the end of the turn it missed
	again.Send("and now?\r")
	again.Expect("Still here.")
	again.Exit()
	if out := again.Output(); !strings.Contains(out, "detached; the session goes on in the server") {
		t.Errorf("no word of detaching:\n%s", out)
	}
	if got := srv.onlySession(t); got.Status != serverclient.StatusIdle {
		t.Errorf("after detaching the session is %s", got.Status)
	}
}

// TestAttachedBadInput: an unknown session, flags that belong to the
// server, --session without --server and no token are refused with one
// line and exit 2.
func TestAttachedBadInput(t *testing.T) {
	srv := startScriptedServer(t, attachScript)
	work := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + srv.State}
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"unknown session", env, []string{"run", "-i", "--server", srv.URL, "--session", "nope"}, "unknown session nope"},
		{"provider", env, []string{"run", "-i", "--server", srv.URL, "--provider", "scripted"}, "--provider does not go with --server"},
		{"session without server", env, []string{"run", "-i", "--session", "x"}, "give --server URL too"},
		{"no token", nil, []string{"run", "-i", "--server", srv.URL}, "no server token"},
		{"token variable unset", env, []string{"run", "-i", "--server", srv.URL, "--token-env", "KOSONG_NO_SUCH"}, "KOSONG_NO_SUCH is not set"},
		{"bad URL", env, []string{"run", "-i", "--server", "ftp://x"}, "invalid server URL"},
		{"acp provider", env, []string{"acp", "--server", srv.URL, "--provider", "scripted"}, "--provider does not go with --server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHostEnv(t, work, tt.env, "", tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

// TestTwoClientsOneApproval: two terminals watch one session; the one
// that answers the approval first wins (here the one that did not start
// the turn, its question in place of its prompt), the other is told it
// was answered and its question withdrawn; the one that answered at its
// prompt leaves cleanly after; a late answer over the API gets 409.
func TestTwoClientsOneApproval(t *testing.T) {
	srv := startScriptedServer(t, attachScript)
	id, work := srv.newSession(t)
	env := []string{"XDG_STATE_HOME=" + srv.State}
	a := startTerminal(t, work, env, "run", "--server", srv.URL, "--session", id)
	b := startTerminal(t, work, env, "run", "--server", srv.URL, "--session", id)
	a.Expect("/help for commands")
	b.Expect("/help for commands")
	a.Send("hi\r")
	a.Expect("Hello from the server.")
	b.Expect("Hello from the server.")
	a.Send("run it\r")
	a.Expect("[1] approve once") // a runs the turn: a key answers
	b.Expect("2) approve for this session")
	b.Send("2\r") // b waits at its prompt: the question takes it, a line answers
	a.Expect("approved for the session by another client")
	a.Expect("Ran the command.")
	b.Expect("Ran the command.")
	if !fileExists(filepath.Join(work, "attached.txt")) {
		t.Fatal("the approved command did not run")
	}
	ev := srv.waitEvent(t, id, "approval_request", nil)
	var req struct {
		RequestID string `json:"request_id"`
	}
	if err := ev.Decode(&req); err != nil {
		t.Fatal(err)
	}
	_, err := srv.Client.AnswerApproval(context.Background(), id, req.RequestID, serverclient.ApprovalAnswer{Decision: serverclient.DecisionReject})
	if !serverclient.IsCode(err, serverclient.CodeConflict) {
		t.Errorf("a second answer: %v, want 409 conflict", err)
	}
	b.Exit()
}

// TestACPAttached: acp --server bridges an editor to a server's sessions:
// session/new creates one in the server, the prompt's answer comes back
// as updates, the server's approval request is the editor's permission
// request and its answer runs the command; session/load of the id
// replays the session; a cancel ends a running turn.
func TestACPAttached(t *testing.T) {
	srv := startScriptedServer(t, attachScript)
	work := t.TempDir()
	c := startACP(t, work, []string{"XDG_STATE_HOME=" + srv.State}, "--server", srv.URL)
	c.permit = func(acp.RequestPermissionRequest) acp.RequestPermissionResponse { return selected("approve") }
	c.initialize()
	sess := c.newSession(work)
	if got := srv.onlySession(t); got.ID != string(sess.SessionId) || got.Cwd != work {
		t.Fatalf("the server's session %+v, the editor's %s", got, sess.SessionId)
	}
	res, err := c.prompt(sess.SessionId, "hi")
	if err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", res, err)
	}
	if lines := summary(c.takeUpdates()); !hasLine(lines, "message Hello from the server.") {
		t.Errorf("updates %q", lines)
	}
	res, err = c.prompt(sess.SessionId, "run it")
	if err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", res, err)
	}
	if len(c.asked) != 1 || !fileExists(filepath.Join(work, "attached.txt")) {
		t.Fatalf("asked %v; the command ran: %v", c.asked, fileExists(filepath.Join(work, "attached.txt")))
	}
	lines := summary(c.takeUpdates())
	if !hasLine(lines, "tool_call c1 execute Shell: echo attached") || !hasLine(lines, "message Ran the command.") {
		t.Errorf("updates %q", lines)
	}

	done := make(chan acp.PromptResponse, 1)
	go func() {
		r, _ := c.prompt(sess.SessionId, "count slowly")
		done <- r
	}()
	c.waitUpdate("the slow answer", func(u acp.SessionUpdate) bool {
		return u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil && strings.Contains(u.AgentMessageChunk.Content.Text.Text, "two")
	})
	if err := c.conn.Cancel(c.ctx(), acp.CancelNotification{SessionId: sess.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.StopReason != acp.StopReasonCancelled {
			t.Errorf("the cancelled prompt stopped with %q", r.StopReason)
		}
	case <-time.After(expectWithin):
		t.Fatal("the cancelled prompt did not end")
	}

	other := startACP(t, work, []string{"XDG_STATE_HOME=" + srv.State}, "--server", srv.URL)
	other.initialize()
	if _, err := other.conn.LoadSession(other.ctx(), acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: work, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	other.waitSummary("message Hello from the server.")
	if _, err := other.conn.LoadSession(other.ctx(), acp.LoadSessionRequest{SessionId: "nope", Cwd: work, McpServers: []acp.McpServer{}}); err == nil ||
		!strings.Contains(err.Error(), "nope") {
		t.Errorf("session/load of an unknown session: %v", err)
	}
}

// waitSummary waits until a line of the updates' summary starts with
// prefix (chunks of one message are joined).
func (c *acpClient) waitSummary(prefix string) {
	c.t.Helper()
	timeout := time.After(expectWithin)
	for {
		c.mu.Lock()
		lines := summary(c.updates)
		c.mu.Unlock()
		if hasLine(lines, prefix) {
			return
		}
		select {
		case <-c.changed:
		case <-timeout:
			c.t.Fatalf("no update %q; got %q", prefix, lines)
		}
	}
}
