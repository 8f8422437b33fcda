package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/kosong-host/kosong-host/host/server"
	"github.com/kosong-host/kosong-host/host/serverclient"
)

// serveProc is a running `kosong-host serve`.
type serveProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	token  string
	state  string // XDG_STATE_HOME
	stderr *syncBuffer
	exited chan struct{}
	// api is a client whose every answer is validated against the
	// OpenAPI document.
	api *serverclient.Client
	raw *http.Client
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listeningRE = regexp.MustCompile(`listening on (\S+) `)

// startServe starts kosong-host serve on a free loopback port with env
// (it must set XDG_STATE_HOME) and waits until it listens.
func startServe(t *testing.T, dir string, env []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(kosongHost(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(hostEnv(), env...)
	p := &serveProc{t: t, cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "XDG_STATE_HOME="); ok {
			p.state = v
		}
	}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		pw.Close()
		close(p.exited)
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.stderr, line)
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("kosong-host serve did not exit after SIGTERM; stderr:\n%s", p.stderr)
		}
	})
	select {
	case p.url = <-found:
	case <-p.exited:
		t.Fatalf("kosong-host serve exited: %s", p.stderr)
	case <-time.After(expectWithin):
		t.Fatalf("kosong-host serve did not listen; stderr:\n%s", p.stderr)
	}
	tok, err := os.ReadFile(filepath.Join(p.state, "kosong-host", "server", "token"))
	if err != nil {
		t.Fatal(err)
	}
	p.token = strings.TrimSpace(string(tok))
	p.raw = &http.Client{Transport: &validating{t: t, next: http.DefaultTransport}}
	p.api, err = serverclient.New(p.url, p.token, p.raw)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *serveProc) signal(sig os.Signal) {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(sig)
	}
}

// waitExit waits for the server to exit and returns its exit code.
func (p *serveProc) waitExit() int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(90 * time.Second):
		p.t.Fatalf("kosong-host serve did not exit; stderr:\n%s", p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

// do sends a raw request (validated) and returns the status and body.
func (p *serveProc) do(method, path string, body string, header ...string) (int, string) {
	p.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.url+path, r)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := p.raw.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// validating checks every answer of the server against the OpenAPI
// document (an event stream's status and headers; its body is read by
// the test).
type validating struct {
	t    *testing.T
	next http.RoundTripper
}

var (
	openAPIOnce sync.Once
	openAPIVal  validator.Validator
	openAPIErr  error
)

func openAPIValidator() (validator.Validator, error) {
	openAPIOnce.Do(func() {
		doc, err := libopenapi.NewDocument(server.OpenAPI)
		if err != nil {
			openAPIErr = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			openAPIErr = fmt.Errorf("%v", errs)
			return
		}
		if ok, verrs := v.ValidateDocument(); !ok {
			openAPIErr = fmt.Errorf("the OpenAPI document is invalid: %v", verrs)
			return
		}
		openAPIVal = v
	})
	return openAPIVal, openAPIErr
}

// validated counts the answers validated, by "METHOD path-pattern STATUS".
var validated sync.Map

func (v *validating) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := v.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	val, verr := openAPIValidator()
	if verr != nil {
		v.t.Errorf("OpenAPI: %v", verr)
		return resp, nil
	}
	check := resp
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// Only the status and type: the body is the live stream.
		cp := *resp
		cp.Body = io.NopCloser(strings.NewReader(""))
		check = &cp
	} else {
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		cp := *resp
		cp.Body = io.NopCloser(bytes.NewReader(b))
		check = &cp
	}
	if ok, errs := val.ValidateHttpResponse(req, check); !ok {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		v.t.Errorf("%s %s -> %d does not match the OpenAPI document:\n%s", req.Method, req.URL.Path, resp.StatusCode, strings.Join(msgs, "\n"))
	}
	validated.Store(fmt.Sprintf("%s %s %d", req.Method, pattern(req.URL.Path), resp.StatusCode), true)
	return resp, nil
}

var idSegment = regexp.MustCompile(`/v1/sessions/[^/]+`)

func pattern(path string) string {
	p := idSegment.ReplaceAllString(path, "/v1/sessions/{id}")
	for _, kind := range []string{"approvals", "questions"} {
		if i := strings.Index(p, "/"+kind+"/"); i >= 0 {
			p = p[:i] + "/" + kind + "/{request_id}"
		}
	}
	return p
}

// events reads a session's event stream into a channel.
type eventReader struct {
	t      *testing.T
	stream *serverclient.Stream
	cancel context.CancelFunc
	ch     chan serverclient.Event
	seen   []serverclient.Event
}

func (p *serveProc) events(id string, after int64) *eventReader {
	p.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	st, err := p.api.Events(ctx, id, after)
	if err != nil {
		cancel()
		p.t.Fatal(err)
	}
	r := &eventReader{t: p.t, stream: st, cancel: cancel, ch: make(chan serverclient.Event, 10000)}
	go func() {
		defer close(r.ch)
		for {
			ev, err := st.Next()
			if err != nil {
				return
			}
			r.ch <- ev
			if ev.Type == "session_closed" {
				return
			}
		}
	}()
	p.t.Cleanup(r.close)
	return r
}

func (r *eventReader) close() {
	r.cancel()
	r.stream.Close()
}

// until returns the first event of type typ (and matching match, if
// given), keeping the ones read on the way in seen.
func (r *eventReader) until(typ string, match func(m map[string]any) bool) map[string]any {
	r.t.Helper()
	deadline := time.After(expectWithin)
	for {
		select {
		case ev, ok := <-r.ch:
			if !ok {
				r.t.Fatalf("the event stream ended waiting for %s; seen %s", typ, typesOf(r.seen))
			}
			r.seen = append(r.seen, ev)
			if ev.Type != typ {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(ev.Data, &m); err != nil {
				r.t.Fatal(err)
			}
			if match == nil || match(m) {
				return m
			}
		case <-deadline:
			r.t.Fatalf("no %s event; seen %s", typ, typesOf(r.seen))
		}
	}
}

func typesOf(evs []serverclient.Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, fmt.Sprintf("%d:%s", e.Seq, e.Type))
	}
	return strings.Join(s, " ")
}

// serveEnv is a fresh user: home, state and config folders.
func serveEnv(t *testing.T) []string { return emptyEnv(t) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), expectWithin)
	t.Cleanup(cancel)
	return ctx
}

// TestServeTwoSessionsApproval: two sessions in two work dirs; a turn's
// Shell call waits for approval, two clients answer it (one wins, the
// other gets 409, a third watcher sees it answered); the command runs in
// its own session's folder; a client that disconnects mid-turn and
// reattaches with Last-Event-ID misses nothing.
func TestServeTwoSessionsApproval(t *testing.T) {
	env := serveEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - text: "Running it."
    tool_calls:
      - {id: c1, name: Shell, arguments: {command: "pwd > where.txt"}}
  - text: "Done."
`)
	p := startServe(t, t.TempDir(), env, "--provider", "scripted", "--script", script)
	ctx := ctxT(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	a, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: dirA})
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: dirB})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == b.ID || a.Cwd != dirA || b.Cwd != dirB || a.Status != serverclient.StatusIdle || a.Provider != "scripted" {
		t.Fatalf("sessions %+v %+v", a, b)
	}
	watcher := p.events(a.ID, 0)
	early := p.events(a.ID, 0) // disconnects mid-turn
	acc, err := p.api.Send(ctx, a.ID, serverclient.Message{Text: "where are you?"})
	if err != nil || acc.Status != serverclient.MessageStarted {
		t.Fatalf("send: %+v %v", acc, err)
	}
	req := watcher.until("approval_request", nil)
	early.until("approval_request", nil)
	early.close()
	last := early.seen[len(early.seen)-1].Seq
	if req["tool"] != "Shell" || req["action"] != "run command" {
		t.Fatalf("approval_request %v", req)
	}
	rid := req["request_id"].(string)
	// Two clients answer at once: one wins.
	type result struct {
		err error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			_, err := p.api.AnswerApproval(ctx, a.ID, rid, serverclient.ApprovalAnswer{Decision: serverclient.DecisionOnce})
			results <- result{err}
		}()
	}
	var won, conflicts int
	for range 2 {
		r := <-results
		switch {
		case r.err == nil:
			won++
		case serverclient.IsCode(r.err, serverclient.CodeConflict):
			conflicts++
		default:
			t.Fatalf("answer: %v", r.err)
		}
	}
	if won != 1 || conflicts != 1 {
		t.Fatalf("answers: %d won, %d conflicts", won, conflicts)
	}
	ans := watcher.until("request_answered", nil)
	if ans["request_id"] != rid || ans["decision"] != "once" {
		t.Fatalf("request_answered %v", ans)
	}
	res := watcher.until("tool_result", nil)
	if res["status"] != "ok" {
		t.Fatalf("tool_result %v", res)
	}
	watcher.until("turn_end", nil)
	got, err := os.ReadFile(filepath.Join(dirA, "where.txt"))
	if err != nil || strings.TrimSpace(string(got)) != dirA {
		t.Fatalf("where.txt: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dirB, "where.txt")); err == nil {
		t.Fatal("the other session's folder was written")
	}
	// Reattach after the turn: the events from the last one read on.
	again := p.events(a.ID, last)
	again.until("turn_end", nil)
	for i, ev := range again.seen {
		if ev.Seq != last+int64(i)+1 {
			t.Fatalf("reattached stream: event %d has seq %d after %d: %s", i, ev.Seq, last, typesOf(again.seen))
		}
	}
	if n := len(early.seen) + len(again.seen); n != len(watcher.seen) {
		t.Fatalf("the reattached client saw %d events, the watcher %d:\n%s\n%s\n%s", n, len(watcher.seen),
			typesOf(early.seen), typesOf(again.seen), typesOf(watcher.seen))
	}
	// Session B is untouched and idle; the history of A is there.
	sb, err := p.api.Session(ctx, b.ID)
	if err != nil || sb.Status != serverclient.StatusIdle || sb.LastSeq != 1 {
		t.Fatalf("session B %+v %v", sb, err)
	}
	h, err := p.api.History(ctx, a.ID)
	if err != nil || len(h.Messages) < 4 || h.Messages[len(h.Messages)-1].Text != "Done." {
		t.Fatalf("history %+v %v", h, err)
	}
	// The sessions are saved as run saves them.
	r := runHostEnv(t, dirA, env, "", "sessions")
	if r.code != 0 || !strings.Contains(r.stdout, a.ID) || !strings.Contains(r.stdout, "where are you?") {
		t.Fatalf("sessions: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// sessions --server lists both.
	r = runHostEnv(t, dirA, env, "", "sessions", "--server", p.url)
	if r.code != 0 || !strings.Contains(r.stdout, a.ID) || !strings.Contains(r.stdout, b.ID) || !strings.Contains(r.stdout, "idle") {
		t.Fatalf("sessions --server: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The server's audit log has session A's call, with its session.
	r = runHostEnv(t, dirA, env, "", "audit", "--server", "--json")
	var calls []struct{ Session, CallID, Tool, Status string }
	if err := json.Unmarshal([]byte(r.stdout), &calls); err != nil || len(calls) != 1 || calls[0].Session != a.ID ||
		calls[0].CallID != "c1" || calls[0].Status != "ok" {
		t.Fatalf("audit --server (%v): %d\n%s%s", err, r.code, r.stdout, r.stderr)
	}
}

// TestServeBadInput: the refusals of the API, each with its status and
// code (and every answer valid by the OpenAPI document).
func TestServeBadInput(t *testing.T) {
	env := serveEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, "turns:\n  - text: hi\n")
	p := startServe(t, t.TempDir(), env, "--provider", "scripted", "--script", script, "--max-body", "4096", "--max-sessions", "2")
	ctx := ctxT(t)
	s, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	gone, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.api.DeleteSession(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	big := `{"text":"` + strings.Repeat("x", 5000) + `"}`
	tests := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		code, msg                string
	}{
		{"no token", "GET", "/v1/sessions", "", []string{"Authorization", ""}, 401, "unauthorized", "missing bearer token"},
		{"wrong token", "GET", "/v1/sessions", "", []string{"Authorization", "Bearer " + strings.Repeat("x", 43)}, 401, "unauthorized", "wrong bearer token"},
		{"token in query", "GET", "/v1/sessions?token=" + p.token, "", []string{"Authorization", ""}, 400, "token_in_query", "query string"},
		{"token in query with header", "GET", "/v1/sessions?access_token=x", "", nil, 400, "token_in_query", "access_token="},
		{"body over limit", "POST", "/v1/sessions/" + s.ID + "/messages", big, nil, 413, "too_large", "limit"},
		{"unknown session", "GET", "/v1/sessions/nope", "", nil, 404, "not_found", `unknown session "nope"`},
		{"unknown session message", "POST", "/v1/sessions/nope/messages", `{"text":"hi"}`, nil, 404, "not_found", "unknown session"},
		{"message to a deleted session", "POST", "/v1/sessions/" + gone.ID + "/messages", `{"text":"hi"}`, nil, 410, "session_deleted", "was deleted"},
		{"events of a deleted session", "GET", "/v1/sessions/" + gone.ID + "/events", "", nil, 410, "session_deleted", "was deleted"},
		{"delete twice", "DELETE", "/v1/sessions/" + gone.ID, "", nil, 410, "session_deleted", "was deleted"},
		{"unknown field", "POST", "/v1/sessions", `{"cwd":"/","colour":1}`, nil, 400, "bad_request", `unknown field "colour"`},
		{"relative cwd", "POST", "/v1/sessions", `{"cwd":"rel"}`, nil, 400, "bad_request", "not an absolute path"},
		{"no cwd", "POST", "/v1/sessions", `{}`, nil, 400, "bad_request", "cwd is required"},
		{"missing cwd folder", "POST", "/v1/sessions", `{"cwd":"/no/such/dir"}`, nil, 400, "bad_request", "is not a folder"},
		{"bad mode", "POST", "/v1/sessions", `{"cwd":"/","mode":"wild"}`, nil, 400, "bad_request", `invalid mode "wild"`},
		{"bad agent", "POST", "/v1/sessions", `{"cwd":"/","agent":"/no/such/agent.yaml"}`, nil, 422, "open_failed", "agent.yaml"},
		{"not JSON", "POST", "/v1/sessions", `{cwd`, nil, 400, "bad_request", "invalid request body"},
		{"empty message", "POST", "/v1/sessions/" + s.ID + "/messages", `{"text":"  "}`, nil, 400, "bad_request", "text is required"},
		{"bad image", "POST", "/v1/sessions/" + s.ID + "/messages", `{"text":"a","images":[{"mime_type":"image/bmp","data":"AA=="}]}`, nil, 400, "bad_request", "images[0].mime_type"},
		{"bad decision", "POST", "/v1/sessions/" + s.ID + "/approvals/approval-9", `{"decision":"maybe"}`, nil, 400, "bad_request", `invalid decision "maybe"`},
		{"no such approval", "POST", "/v1/sessions/" + s.ID + "/approvals/approval-9", `{"decision":"once"}`, nil, 404, "not_found", "approval-9"},
		{"no such question", "POST", "/v1/sessions/" + s.ID + "/questions/question-9", `{"answers":{"q":"a"}}`, nil, 404, "not_found", "question-9"},
		{"bad Last-Event-ID", "GET", "/v1/sessions/" + s.ID + "/events", "", []string{"Last-Event-ID", "x1"}, 400, "bad_request", "invalid Last-Event-ID"},
		{"bad Host", "GET", "/v1/sessions", "", []string{"Host", "evil.example:7433"}, 403, "bad_host", "evil.example"},
		{"unknown endpoint", "GET", "/v1/nothing", "", nil, 404, "not_found", "no such endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, p.url+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+p.token)
			for i := 0; i+1 < len(tt.header); i += 2 {
				switch {
				case tt.header[i] == "Host":
					req.Host = tt.header[i+1]
				case tt.header[i+1] == "":
					req.Header.Del(tt.header[i])
				default:
					req.Header.Set(tt.header[i], tt.header[i+1])
				}
			}
			hc := p.raw
			if tt.path == "/v1/nothing" {
				hc = http.DefaultClient // a path the document has not
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var eb serverclient.ErrorBody
			b, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(b, &eb); err != nil {
				t.Fatalf("not an error body: %s", b)
			}
			if resp.StatusCode != tt.status || eb.Error.Code != tt.code || !strings.Contains(eb.Error.Message, tt.msg) {
				t.Fatalf("got %d %s %q, want %d %s ~%q", resp.StatusCode, eb.Error.Code, eb.Error.Message, tt.status, tt.code, tt.msg)
			}
			if tt.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
	// The session limit: s and one more are open; a third is refused.
	if _, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: t.TempDir()}); !serverclient.IsCode(err, serverclient.CodeTooMany) {
		t.Fatalf("a third session: %v", err)
	}
	// healthz needs no token; everything else does.
	resp, err := http.Get(p.url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := p.api.AnswerApproval(ctx, s.ID, "approval-1", serverclient.ApprovalAnswer{Decision: "reject", Feedback: "x"}); !serverclient.IsCode(err, serverclient.CodeNotFound) {
		t.Fatalf("answer with no request: %v", err)
	}
}

// TestServeRefusesRemote: a non-loopback --listen needs --allow-remote
// and TLS; the refusals exit 2 with one line.
func TestServeRefusesRemote(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "is not a loopback address: serving sessions to other machines needs --allow-remote and TLS"},
		{[]string{"--listen", "0.0.0.0:0", "--allow-remote"}, "needs TLS: give --tls-cert and --tls-key"},
		{[]string{"--listen", "127.0.0.1:0", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--listen", "nohostport"}, "invalid --listen"},
		{[]string{"--token-env", "KH_NO_SUCH_TOKEN"}, "--token-env KH_NO_SUCH_TOKEN: the variable is not set"},
		{[]string{"--token-env", "KH_SHORT_TOKEN"}, "shorter than 16"},
		{[]string{"--rotate-token", "--token-env", "KH_SHORT_TOKEN"}, "do not go together"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			env := append(serveEnv(t), "KH_SHORT_TOKEN=abc")
			r := runHostEnv(t, t.TempDir(), env, "", append([]string{"serve"}, tt.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.msg) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
		})
	}
}

// TestServeSocketAndToken: a unix socket of mode 0600; the token file is
// 0600, kept across starts and made anew by --rotate-token; a token from
// --token-env is the one asked for.
func TestServeSocketAndToken(t *testing.T) {
	env := serveEnv(t)
	state := strings.TrimPrefix(env[3], "XDG_STATE_HOME=")
	sock := filepath.Join(t.TempDir(), "k.sock")
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, "turns:\n  - text: hi\n")
	cmd := exec.Command(kosongHost(t), "serve", "--listen", sock, "--provider", "scripted", "--script", script)
	cmd.Env = append(hostEnv(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	tokenFile := filepath.Join(state, "kosong-host", "server", "token")
	var c *serverclient.Client
	deadline := time.Now().Add(expectWithin)
	for !strings.Contains(stderr.String(), "listening on unix://"+sock) {
		if time.Now().After(deadline) {
			t.Fatalf("no socket; stderr:\n%s", stderr)
		}
		select {
		case err := <-done:
			t.Fatalf("serve exited: %v\n%s", err, stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	st, err := os.Stat(sock)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v %v", st, err)
	}
	tst, err := os.Stat(tokenFile)
	if err != nil || tst.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", tst, err)
	}
	tok, _ := os.ReadFile(tokenFile)
	c, err = serverclient.New("unix://"+sock, strings.TrimSpace(string(tok)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := c.CreateSession(ctx, serverclient.CreateSession{Cwd: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	r := runHostEnv(t, t.TempDir(), env, "", "sessions", "--server", "unix://"+sock, "--json")
	var list []serverclient.Session
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 1 {
		t.Fatalf("sessions --server: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr)
	}
	// A second start keeps the token; --rotate-token replaces it.
	p := startServe(t, t.TempDir(), env)
	if p.token != strings.TrimSpace(string(tok)) {
		t.Fatal("the token changed across starts")
	}
	p.signal(syscall.SIGTERM)
	p.waitExit()
	p = startServe(t, t.TempDir(), env, "--rotate-token")
	if p.token == strings.TrimSpace(string(tok)) {
		t.Fatal("--rotate-token kept the token")
	}
	old, _ := serverclient.New(p.url, strings.TrimSpace(string(tok)), nil)
	if _, err := old.Sessions(ctx); !serverclient.IsCode(err, serverclient.CodeUnauthorized) {
		t.Fatalf("the old token: %v", err)
	}
	p.signal(syscall.SIGTERM)
	p.waitExit()
	// --token-env: that token, and the file's is refused.
	env2 := append(env, "KH_TOKEN="+strings.Repeat("t", 32))
	p = startServe(t, t.TempDir(), env2, "--token-env", "KH_TOKEN")
	byEnv, _ := serverclient.New(p.url, strings.Repeat("t", 32), nil)
	if _, err := byEnv.Sessions(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := p.api.Sessions(ctx); !serverclient.IsCode(err, serverclient.CodeUnauthorized) {
		t.Fatalf("the file's token with --token-env: %v", err)
	}
}

// TestServeSIGTERM: SIGTERM during 10 running turns cancels them, saves
// every session (the completed steps with it) and exits 0; started again,
// the server lists the 10 sessions, interrupted, and resumes one; an
// event stream reconnecting with an id older than the new log gets
// events_lost first.
func TestServeSIGTERM(t *testing.T) {
	env := serveEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - text: "Waiting."
    tool_calls:
      - {id: w1, name: Shell, arguments: {command: "sleep 120"}}
  - text: "never"
`)
	p := startServe(t, t.TempDir(), env, "--provider", "scripted", "--script", script, "--yolo")
	ctx := ctxT(t)
	var ids []string
	var lasts []int64
	for i := range 10 {
		s, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if s.Mode != serverclient.ModeYolo {
			t.Fatalf("mode %q", s.Mode)
		}
		r := p.events(s.ID, 0)
		if _, err := p.api.Send(ctx, s.ID, serverclient.Message{Text: fmt.Sprintf("wait %d", i)}); err != nil {
			t.Fatal(err)
		}
		r.until("tool_call", nil)
		ids = append(ids, s.ID)
		defer func() {
			// The stream ends with session_closed (reason shutdown).
			ev := r.until("session_closed", nil)
			if ev["reason"] != "shutdown" {
				t.Errorf("session_closed %v", ev)
			}
		}()
		lasts = append(lasts, 0)
	}
	for _, id := range ids {
		s, err := p.api.Session(ctx, id)
		if err != nil || s.Status != serverclient.StatusRunning {
			t.Fatalf("session %s: %+v %v", id, s, err)
		}
	}
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "every session is saved") {
		t.Fatalf("stderr:\n%s", p.stderr)
	}
	// Every session is saved with its interrupted step.
	root := filepath.Join(p.state, "kosong-host", "sessions")
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(root, id, "history.jsonl"))
		if err != nil || !strings.Contains(string(b), `"w1"`) || !strings.Contains(string(b), "wait ") {
			t.Fatalf("history of %s: %v\n%s", id, err, b)
		}
	}
	p2 := startServe(t, t.TempDir(), env, "--provider", "scripted", "--script", script, "--yolo")
	list, err := p2.api.Sessions(ctx)
	if err != nil || len(list) != 10 {
		t.Fatalf("after restart: %d sessions, %v", len(list), err)
	}
	for i, s := range list {
		if s.Status != serverclient.StatusSaved || !s.Interrupted || s.LastSeq == 0 {
			t.Fatalf("after restart, session %d: %+v", i, s)
		}
	}
	r := runHostEnv(t, t.TempDir(), env, "", "sessions", "--server", p2.url)
	if r.code != 0 || strings.Count(r.stdout, "saved (interrupted)") != 10 {
		t.Fatalf("sessions --server: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A client that read up to seq 2 before the restart: those after are
	// gone with the old server's log.
	old := p2.events(list[0].ID, 2)
	lost := old.until("events_lost", nil)
	if lost["after"] != float64(2) || lost["oldest"] != float64(list[0].LastSeq+1) {
		t.Fatalf("events_lost %v (last_seq %d)", lost, list[0].LastSeq)
	}
	// A message resumes the saved session with its history.
	if _, err := p2.api.Send(ctx, list[0].ID, serverclient.Message{Text: "again"}); err != nil {
		t.Fatal(err)
	}
	sess := old.until("session", nil)
	if sess["session_id"] != list[0].ID {
		t.Fatalf("resumed session event %v", sess)
	}
	old.until("tool_call", nil)
	s, err := p2.api.Session(ctx, list[0].ID)
	if err != nil || s.Interrupted || s.Status != serverclient.StatusRunning {
		t.Fatalf("resumed: %+v %v", s, err)
	}
	if _, err := p2.api.Cancel(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	old.until("turn_end", func(m map[string]any) bool { return m["reason"] == "cancelled" })
}

// TestServeUntrustedAgent: a session in a folder whose agent file is not
// trusted runs the built-in default agent, and says why in one line; with
// the folder trusted, its own agent runs.
func TestServeUntrustedAgent(t *testing.T) {
	env := serveEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, "turns:\n  - text: hi\n")
	dir := writeFiles(t, map[string]string{"agent.yaml": "version: 1\nagent:\n  extend: default\n  name: projectagent\n"})
	p := startServe(t, t.TempDir(), env, "--provider", "scripted", "--script", script)
	ctx := ctxT(t)
	s, err := p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s.Agent != "kosong" || s.AgentFile != "built-in default" || !strings.Contains(s.Note, "ignoring ./agent.yaml: this folder is not trusted") ||
		strings.Contains(s.Note, "\n") {
		t.Fatalf("untrusted: %+v", s)
	}
	if r := runUntrusted(t, dir, env, "y\n", "trust", dir); r.code != 0 {
		t.Fatalf("trust: %d %s", r.code, r.stderr)
	}
	s, err = p.api.CreateSession(ctx, serverclient.CreateSession{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s.Agent != "projectagent" || s.Note != "" || s.AgentFile != filepath.Join(dir, "agent.yaml") {
		t.Fatalf("trusted: %+v", s)
	}
}

// TestServeOpenAPI: the document served is the embedded one, valid
// OpenAPI 3.1; every endpoint's answers, errors included, match it (the
// validating transport of the other tests checks each; this test goes
// through every path and the answers the others do not).
func TestServeOpenAPI(t *testing.T) {
	if _, err := openAPIValidator(); err != nil {
		t.Fatal(err)
	}
	env := serveEnv(t)
	script := filepath.Join(t.TempDir(), "s.yaml")
	writeScript(t, script, `turns:
  - tool_calls:
      - {id: q1, name: AskUserQuestion, arguments: {questions: [{question: "Which?", header: "Pick", options: [{label: "A", description: "a"}, {label: "B", description: "b"}], multi_select: false}]}}
  - text: "Picked."
  - text: "Second turn."
`)
	p := startServe(t, t.TempDir(), env, "--provider", "scripted", "--script", script)
	ctx := ctxT(t)
	status, body := p.do("GET", "/v1/openapi.json", "")
	if status != 200 || body != string(server.OpenAPI) {
		t.Fatalf("openapi.json: %d", status)
	}
	if status, _ := p.do("GET", "/healthz", ""); status != 200 {
		t.Fatal(status)
	}
	dir := t.TempDir()
	status, body = p.do("POST", "/v1/sessions", fmt.Sprintf(`{"cwd":%q}`, dir))
	if status != 201 {
		t.Fatalf("create: %d %s", status, body)
	}
	var s serverclient.Session
	_ = json.Unmarshal([]byte(body), &s)
	r := p.events(s.ID, 0)
	if ev := r.until("session", nil); ev["cwd"] != dir {
		t.Fatalf("session event %v", ev)
	}
	if status, body := p.do("POST", "/v1/sessions/"+s.ID+"/messages", `{"text":"ask me"}`); status != 202 {
		t.Fatalf("message: %d %s", status, body)
	}
	q := r.until("question_request", nil)
	qid := q["request_id"].(string)
	// A second message waits for the turn.
	if status, body := p.do("POST", "/v1/sessions/"+s.ID+"/messages", `{"text":"next"}`); status != 202 || !strings.Contains(body, `"queued"`) {
		t.Fatalf("queued: %d %s", status, body)
	}
	if status, body := p.do("GET", "/v1/sessions/"+s.ID, ""); status != 200 || !strings.Contains(body, qid) || !strings.Contains(body, `"queued":1`) {
		t.Fatalf("get: %d %s", status, body)
	}
	if status, body := p.do("GET", "/v1/sessions", ""); status != 200 || !strings.Contains(body, s.ID) {
		t.Fatalf("list: %d %s", status, body)
	}
	if status, body := p.do("POST", "/v1/sessions/"+s.ID+"/questions/"+qid, `{"answers":{"Which?":"B"}}`); status != 200 {
		t.Fatalf("answer: %d %s", status, body)
	}
	if status, _ := p.do("POST", "/v1/sessions/"+s.ID+"/questions/"+qid, `{"dismissed":true}`); status != 409 {
		t.Fatalf("second answer: %d", status)
	}
	if ans := r.until("request_answered", nil); ans["kind"] != "question" || ans["answers"].(map[string]any)["Which?"] != "B" {
		t.Fatalf("request_answered %v", ans)
	}
	res := r.until("tool_result", nil)
	if !strings.Contains(res["output"].(string), "B") {
		t.Fatalf("the answer did not reach the tool: %v", res)
	}
	r.until("turn_end", nil)
	r.until("turn_start", func(m map[string]any) bool { return m["text"] == "next" })
	r.until("turn_end", nil)
	if status, body := p.do("GET", "/v1/sessions/"+s.ID+"/history", ""); status != 200 || !strings.Contains(body, "Second turn.") {
		t.Fatalf("history: %d %s", status, body)
	}
	if status, body := p.do("POST", "/v1/sessions/"+s.ID+"/cancel", `{}`); status != 200 || body != "{\"cancelled\":false,\"dropped\":0}\n" {
		t.Fatalf("cancel: %d %s", status, body)
	}
	// The event stream's 200 (headers) is validated as it opens; the
	// stream of a deleted session ends with session_closed.
	if status, _ := p.do("DELETE", "/v1/sessions/"+s.ID, ""); status != 204 {
		t.Fatalf("delete: %d", status)
	}
	if ev := r.until("session_closed", nil); ev["reason"] != "deleted" {
		t.Fatalf("session_closed %v", ev)
	}
	if status, _ := p.do("GET", "/v1/sessions/"+s.ID, ""); status != 410 {
		t.Fatalf("get deleted: %d", status)
	}
	// A session in plan mode.
	if status, body := p.do("POST", "/v1/sessions", fmt.Sprintf(`{"cwd":%q,"mode":"plan"}`, t.TempDir())); status != 201 || !strings.Contains(body, `"mode":"plan"`) {
		t.Fatalf("plan mode: %d %s", status, body)
	}
	// Every endpoint was answered and validated at least once.
	for _, want := range []string{
		"GET /healthz 200", "GET /v1/openapi.json 200", "POST /v1/sessions 201", "GET /v1/sessions 200",
		"GET /v1/sessions/{id} 200", "DELETE /v1/sessions/{id} 204", "POST /v1/sessions/{id}/messages 202",
		"POST /v1/sessions/{id}/cancel 200", "GET /v1/sessions/{id}/events 200", "GET /v1/sessions/{id}/history 200",
		"POST /v1/sessions/{id}/questions/{request_id} 200", "POST /v1/sessions/{id}/questions/{request_id} 409",
		"GET /v1/sessions/{id} 410",
	} {
		if _, ok := validated.Load(want); !ok {
			t.Errorf("not validated: %s", want)
		}
	}
	_ = ctx
}
