package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/kosong-host/kosong-host/host/temporalengine"
	"github.com/kosong-host/kosong-host/host/temporalengine/temporaltest"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// notifyWriter keeps a process's output and closes seen once it holds want.
type notifyWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *notifyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *notifyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// temporalWorker is a `kosong-host worker` process.
type temporalWorker struct {
	cmd    *exec.Cmd
	stderr *notifyWriter
	done   chan struct{}
}

// startWorker starts a worker of the server's task queue q in dir and
// waits until it polls.
func startWorker(t *testing.T, dir, hostPort, q string, env []string) *temporalWorker {
	t.Helper()
	cmd := exec.Command(kosongHost(t), "--trust", "--agent", filepath.Join(dir, "agent.yaml"), "worker", "--temporal", hostPort, "--task-queue", q)
	cmd.Dir = dir
	cmd.Env = append(hostEnv("XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir()), env...)
	w := &temporalWorker{cmd: cmd, stderr: &notifyWriter{want: "worker of task queue", seen: make(chan struct{})}, done: make(chan struct{})}
	cmd.Stderr, cmd.Stdout = w.stderr, w.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-w.done
		}
	})
	select {
	case <-w.stderr.seen:
	case <-w.done:
		t.Fatalf("the worker exited: %s", w.stderr)
	case <-time.After(expectWithin):
		t.Fatalf("the worker did not start within %s: %s", expectWithin, w.stderr)
	}
	return w
}

// kill SIGKILLs the worker, as a machine that dies.
func (w *temporalWorker) kill(t *testing.T) {
	t.Helper()
	_ = w.cmd.Process.Kill()
	<-w.done
}

// waitUntil waits until cond holds, checking every 50ms up to expectWithin.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(expectWithin)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, expectWithin)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTemporalSessionSurvivesWorkers: a one-shot session on Temporal
// whose workers are SIGKILLed mid-call goes on on the next worker. The
// Shell call that appends a line is never run twice and the model is told
// its outcome is unknown; the read-only FetchURL call is run again and
// succeeds; the provider key never enters the workflow's history, which
// replays deterministically. The model is told when its session moves to
// another worker.
func TestTemporalSessionSurvivesWorkers(t *testing.T) {
	srv := temporaltest.Start(t)
	var fetches atomic.Int64
	fetching := make(chan struct{})
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fetches.Add(1) == 1 {
			close(fetching)
			<-r.Context().Done() // its worker dies while it waits
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("the fetched page\n"))
	}))
	defer page.Close()
	shellArgs, _ := json.Marshal(map[string]any{"command": "echo line >> out.txt; sleep 5", "timeout": 60})
	fetchArgs, _ := json.Marshal(map[string]string{"url": page.URL + "/page"})
	model := openaitest.NewServer(t,
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_shell", Name: "Shell", Arguments: string(shellArgs)}}},
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_fetch", Name: "FetchURL", Arguments: string(fetchArgs)}}},
		openaitest.Response{Text: []string{"all ", "done"}},
	)
	const key = "sk-worker-only-key-5f2c"
	agentYAML := fmt.Sprintf(`version: 1
agent:
  name: t
  system_prompt_path: ./s.md
  tools:
    - shell:Shell
    - plugin: web
      tools: [FetchURL]
      config: {allowed_addresses: [%q]}
`, strings.TrimPrefix(page.URL, "http://"))
	dir := writeFiles(t, map[string]string{"agent.yaml": agentYAML, "s.md": "hi"})
	env := []string{"OPENAI_API_KEY=" + key, "OPENAI_BASE_URL=" + model.BaseURL()}
	const q = "e2e"

	a := startWorker(t, dir, srv.HostPort, q, env)
	run := exec.Command(kosongHost(t), "--trust", "run", "-p", "go", "--engine", "temporal", "--temporal", srv.HostPort,
		"--task-queue", q, "--yolo", "--heartbeat-timeout", "3s")
	run.Dir = dir
	run.Env = hostEnv("XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	runDone := make(chan error, 1)
	go func() { runDone <- run.Wait() }()
	t.Cleanup(func() { _ = run.Process.Kill() })

	out := filepath.Join(dir, "out.txt")
	waitUntil(t, "the Shell call appends its line on worker A", func() bool {
		b, _ := os.ReadFile(out)
		return len(b) > 0
	})
	b := startWorker(t, dir, srv.HostPort, q, env)
	a.kill(t)
	select {
	case <-fetching:
	case err := <-runDone:
		t.Fatalf("the run ended before FetchURL ran: %v\nstdout %s\nstderr %s\nworker B: %s", err, &stdout, &stderr, b.stderr)
	case <-time.After(2 * expectWithin):
		t.Fatalf("FetchURL did not run on worker B\nworker B: %s", b.stderr)
	}
	startWorker(t, dir, srv.HostPort, q, env)
	b.kill(t)
	select {
	case err := <-runDone:
		if err != nil {
			t.Fatalf("run: %v\nstdout %s\nstderr %s", err, &stdout, &stderr)
		}
	case <-time.After(2 * expectWithin):
		t.Fatalf("the run did not end\nstderr %s", &stderr)
	}
	if got := strings.TrimSpace(stdout.String()); got != "all done" {
		t.Errorf("stdout %q, want the answer", got)
	}
	if got, _ := os.ReadFile(out); string(got) != "line\n" {
		t.Errorf("out.txt %q: the Shell call ran more than once (or never)", got)
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("FetchURL fetched %d times, want 2 (once interrupted, once again)", n)
	}
	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	toolText := func(r openaitest.Request, id string) string {
		for _, m := range r.Chat.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return m.Text()
			}
		}
		return ""
	}
	if got := toolText(reqs[1], "call_shell"); got != temporalengine.OutcomeUnknown {
		t.Errorf("the model saw %q for the interrupted Shell call, want %q", got, temporalengine.OutcomeUnknown)
	}
	if got := toolText(reqs[2], "call_fetch"); !strings.Contains(got, "the fetched page") {
		t.Errorf("the model saw %q for the FetchURL call run again", got)
	}
	for i, r := range reqs[1:] {
		if last := r.Chat.Messages[len(r.Chat.Messages)-1]; last.Role != "user" || last.Text() != temporalengine.MovedNote {
			t.Errorf("request %d: the model was not told its session moved to another worker: last message %s %q", i+2, last.Role, last.Text())
		}
	}

	// The workflow's history: no provider key in it, and it replays.
	m := regexp.MustCompile(`workflow (kosong-session-[0-9a-f]+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no workflow id on stderr: %s", &stderr)
	}
	c := srv.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), expectWithin)
	defer cancel()
	hist := &history.History{}
	it := c.GetWorkflowHistory(ctx, m[1], "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		hist.Events = append(hist.Events, ev)
	}
	raw, err := proto.Marshal(hist) // payloads as they are stored
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(key)) {
		t.Error("the provider key is in the workflow's history")
	}
	if !bytes.Contains(raw, []byte("line")) {
		t.Error("the history lacks the session's content: the key check proves nothing")
	}
	if path := os.Getenv("KOSONG_RECORD_TEMPORAL_HISTORY"); path != "" {
		// host/temporalengine/testdata's recorded session is made so.
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(hist)
		if err != nil || os.WriteFile(path, b, 0o644) != nil {
			t.Fatalf("recording the history: %v", err)
		}
	}
	replayer := worker.NewWorkflowReplayer()
	temporalengine.RegisterReplay(replayer)
	if err := replayer.ReplayWorkflowHistory(nil, hist); err != nil {
		t.Errorf("replaying the session's history: %v", err)
	}
}

// TestTemporalFlagErrors: bad engine flags are one-line usage errors
// (exit 2); an unreachable server is exit 1, named.
func TestTemporalFlagErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi", "short.key": "abc\n"})
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing payload key file", []string{"run", "-p", "hi", "--engine", "temporal", "--temporal", "127.0.0.1:1", "--payload-key", "nokey"}, 2,
			"invalid --payload-key: payload key file nokey: no such file or directory"},
		{"short payload key", []string{"worker", "--temporal", "127.0.0.1:1", "--payload-key", "short.key"}, 2,
			"invalid --payload-key: payload key file short.key: 4 bytes: want a 32-byte key"},
		{"negative claim TTL", []string{"worker", "--temporal", "127.0.0.1:1", "--claim-ttl", "-1h"}, 2, "invalid --claim-ttl -1h0m0s: it must not be negative"},
		{"unknown engine", []string{"run", "-p", "hi", "--engine", "cloud"}, 2, `invalid --engine "cloud": use inprocess or temporal`},
		{"no server", []string{"run", "-p", "hi", "--engine", "temporal"}, 2, "--temporal HOST:PORT is required"},
		{"unknown output format", []string{"run", "-p", "hi", "--engine", "temporal", "--temporal", "127.0.0.1:1", "--output-format", "json"}, 2, `invalid --output-format "json": use text or stream-json`},
		{"resume", []string{"run", "-p", "hi", "--engine", "temporal", "--temporal", "127.0.0.1:1", "--resume", "x"}, 2, "--engine temporal runs a new session's one turn"},
		{"short heartbeat", []string{"run", "-p", "hi", "--engine", "temporal", "--temporal", "127.0.0.1:1", "--heartbeat-timeout", "10ms"}, 2, "invalid --heartbeat-timeout 10ms"},
		{"unreachable server", []string{"run", "-p", "hi", "--engine", "temporal", "--temporal", "127.0.0.1:1"}, 1, "connecting to Temporal at 127.0.0.1:1"},
		{"worker without a server", []string{"worker"}, 2, "--temporal HOST:PORT is required"},
		{"relative claim-check directory", []string{"worker", "--temporal", "127.0.0.1:1", "--claim-dir", "claims"}, 2, `invalid --claim-dir "claims": not an absolute path`},
		{"unreachable server for a worker", []string{"worker", "--temporal", "127.0.0.1:1"}, 1, "connecting to Temporal at 127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runHost(t, dir, "", tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, "goroutine ") {
				t.Fatalf("exit %d, want %d with %q\nstderr %s", r.code, tt.code, tt.want, r.stderr)
			}
		})
	}
}

// TestTemporalPayloadKey: with --payload-key (the worker's from
// $KOSONG_TEMPORAL_PAYLOAD_KEY_FILE) a session runs end to end and its
// raw workflow history holds neither the prompt nor the tool's output in
// the clear; a run without the key fails with a one-line error saying
// the session's payloads are encrypted.
func TestTemporalPayloadKey(t *testing.T) {
	srv := temporaltest.Start(t)
	const prompt, output = "prompt-marker-c41d", "tool-output-marker-77b0"
	shellArgs, _ := json.Marshal(map[string]any{"command": "echo " + output})
	model := openaitest.NewServer(t,
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_shell", Name: "Shell", Arguments: string(shellArgs)}}},
		openaitest.Response{Text: []string{"all done"}},
		openaitest.Response{Text: []string{"hello"}},
	)
	agentYAML := "version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools:\n    - shell:Shell\n"
	dir := writeFiles(t, map[string]string{"agent.yaml": agentYAML, "s.md": "hi",
		"payload.key": "0101010101010101010101010101010101010101010101010101010101010101\n"})
	keyFile := filepath.Join(dir, "payload.key")
	const q = "payload-key"
	startWorker(t, dir, srv.HostPort, q, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.BaseURL(), "KOSONG_TEMPORAL_PAYLOAD_KEY_FILE=" + keyFile})
	runWith := func(args ...string) (result, string) {
		r := runHostEnv(t, dir, []string{"XDG_STATE_HOME=" + t.TempDir()}, "", append([]string{"run", "--engine", "temporal", "--temporal", srv.HostPort, "--task-queue", q, "--yolo"}, args...)...)
		m := regexp.MustCompile(`workflow (kosong-session-[0-9a-f]+)`).FindStringSubmatch(r.stderr)
		if m == nil {
			t.Fatalf("no workflow id on stderr: %s", r.stderr)
		}
		return r, m[1]
	}
	// stream-json: the live events come from the turn's feed, whose
	// payloads are sealed with the same key.
	r, wid := runWith("-p", prompt, "--payload-key", keyFile, "--output-format", "stream-json")
	if r.code != 0 || !strings.Contains(r.stdout, `"type":"text"`) || !strings.Contains(r.stdout, `"type":"tool_result"`) ||
		!strings.Contains(r.stdout, output) || !strings.Contains(r.stdout, `"type":"result","subtype":"success","text":"all done"`) {
		t.Fatalf("run with the key: exit %d, want the live text and tool_result events and the result\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	seen := ""
	for _, m := range reqs[1].Chat.Messages {
		seen += m.Text()
	}
	if !strings.Contains(seen, output) {
		t.Fatalf("the model did not see the tool's output: %q", seen)
	}
	c := srv.Dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), expectWithin)
	defer cancel()
	// The session's history and its first turn's feed.
	feed := temporalengine.FeedID(strings.TrimPrefix(wid, temporalengine.WorkflowIDPrefix), 1)
	for _, id := range []string{wid, feed} {
		hist := &history.History{}
		it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			hist.Events = append(hist.Events, ev)
		}
		raw, err := proto.Marshal(hist)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(raw, []byte("binary/encrypted")) {
			t.Fatalf("the history of %s has no encrypted payload", id)
		}
		for _, m := range []string{prompt, output} {
			if bytes.Contains(raw, []byte(m)) {
				t.Errorf("the raw history of %s holds %q in the clear", id, m)
			}
		}
	}

	r, _ = runWith("-p", "hi")
	if r.code != 1 || !strings.Contains(r.stderr, "encrypted (key id") || !strings.Contains(r.stderr, "--payload-key") {
		t.Fatalf("run without the key: exit %d, want 1 with the encrypted-payload error\nstderr %s", r.code, r.stderr)
	}
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "error:") && !strings.Contains(line, "--payload-key") {
			t.Errorf("the error is not one line: %q", r.stderr)
		}
	}
}
