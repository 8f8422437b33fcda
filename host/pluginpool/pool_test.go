package pluginpool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/pluginpool"
	"github.com/kosong-host/kosong-host/host/sandbox"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// bound is a generous bound for a real plugin process on a busy 2-core
// machine.
const bound = 60 * time.Second

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

func binary(t *testing.T) string {
	t.Helper()
	p, err := testbin.Build("host/testdata/plugins/sessions", "sessions")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// session is one session's load of the sessions plugin.
type session struct {
	id       string
	loaded   *plugin.Loaded
	tools    map[string]toolset.Tool
	progress chan string
}

func (s *session) call(t *testing.T, tool string) toolset.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	return s.tools[tool].Call(ctx, fmt.Sprintf("%s-%s", s.id, tool), json.RawMessage(`{}`))
}

func (s *session) pid(t *testing.T) int {
	t.Helper()
	cur := s.loaded.Plugins[0].Current()
	if cur == nil {
		t.Fatalf("session %s: no process", s.id)
	}
	return cur.Pid()
}

// open loads the plugin as session id would, through pool (nil: none).
func open(t *testing.T, pool plugin.Pool, id string, cfg plugin.Config) *session {
	t.Helper()
	s := &session{id: id, tools: map[string]toolset.Tool{}, progress: make(chan string, 16)}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	s.loaded = plugin.Load(ctx, []plugin.Spec{{Config: cfg}}, plugin.Options{
		SessionID: id, WorkDir: t.TempDir(), StateDir: t.TempDir(), Pool: pool,
		OnProgress: func(p toolset.Progress) { s.progress <- p.Message },
	})
	if len(s.loaded.Failures) > 0 || len(s.loaded.Plugins) != 1 {
		t.Fatalf("session %s: %v", id, s.loaded.Failures)
	}
	for _, st := range s.loaded.Status {
		s.tools[st.Name] = st.Tool
	}
	t.Cleanup(s.loaded.Close)
	return s
}

// processes counts the processes running path (Linux: /proc), or -1
// where there is no /proc.
func processes(t *testing.T, path string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return -1
	}
	cmdlines, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		if argv0, _, _ := strings.Cut(string(b), "\x00"); argv0 == path {
			n++
		}
	}
	return n
}

func countOf(t *testing.T, r toolset.Result, session string) string {
	t.Helper()
	out := r.OutputText()
	if r.IsError() || !strings.HasPrefix(out, "session="+session+" ") {
		t.Fatalf("Count in session %s: %+v", session, r)
	}
	f := strings.Fields(out)
	return f[1]
}

func TestSessionsShareOneProcessWithTheirOwnLoads(t *testing.T) {
	bin := binary(t)
	pool := pluginpool.New()
	t.Cleanup(pool.Close)
	cfg := plugin.Config{Name: "sessions", Path: bin}
	a, b, c := open(t, pool, "a", cfg), open(t, pool, "b", cfg), open(t, pool, "c", cfg)
	if a.pid(t) != b.pid(t) || b.pid(t) != c.pid(t) {
		t.Fatalf("three sessions, pids %d %d %d: want one process", a.pid(t), b.pid(t), c.pid(t))
	}
	if n := processes(t, bin); n != 1 && n != -1 {
		t.Fatalf("%d processes of %s, want 1", n, bin)
	}
	if !a.loaded.Plugins[0].Shared() || pool.Processes() != 1 {
		t.Fatalf("shared %v, pool processes %d", a.loaded.Plugins[0].Shared(), pool.Processes())
	}
	// Each session's tools are its own: its session, its counter.
	for i, want := range []string{"count=1", "count=2", "count=3"} {
		if got := countOf(t, a.call(t, "Count"), "a"); got != want {
			t.Fatalf("a, call %d: %s, want %s", i+1, got, want)
		}
	}
	if got := countOf(t, b.call(t, "Count"), "b"); got != "count=1" {
		t.Fatalf("b: %s, want count=1 (a's counter is a's)", got)
	}
	// The process outlives the sessions that leave, not the last one.
	first := a.loaded.Plugins[0].Current()
	a.loaded.Close()
	b.loaded.Close()
	if got := countOf(t, c.call(t, "Count"), "c"); got != "count=1" {
		t.Fatalf("c after a and b closed: %s", got)
	}
	if c.loaded.Plugins[0].Current() != first {
		t.Fatal("the process changed when two of its sessions closed")
	}
	c.loaded.Close()
	select {
	case <-first.Done():
	case <-time.After(bound):
		t.Fatal("the shared process still runs after its last session closed")
	}
	if n := pool.Processes(); n != 0 {
		t.Fatalf("pool holds %d processes after every session closed", n)
	}
	// A later session starts a new one.
	d := open(t, pool, "d", cfg)
	if d.pid(t) == first.Pid() {
		t.Fatal("a closed process was handed out again")
	}
}

func TestProcessPerSessionWhenNotShareable(t *testing.T) {
	bin := binary(t)
	alone := plugin.Config{Name: "sessions", Path: bin, Env: []string{"KOSONG_TEST_ALONE"},
		Getenv: func(k string) string {
			if k == "KOSONG_TEST_ALONE" {
				return "1"
			}
			return ""
		}}
	tests := []struct {
		name string
		cfg  plugin.Config
	}{
		{"a tool keeps per-process state", alone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool := pluginpool.New()
			t.Cleanup(pool.Close)
			a, b := open(t, pool, "a", tt.cfg), open(t, pool, "b", tt.cfg)
			if a.pid(t) == b.pid(t) {
				t.Fatalf("two sessions share process %d", a.pid(t))
			}
			if a.loaded.Plugins[0].Shared() || pool.Processes() != 0 {
				t.Fatal("an unshareable plugin is in the pool")
			}
			if got := countOf(t, b.call(t, "Count"), "b"); got != "count=1" {
				t.Fatalf("b: %s", got)
			}
			first := a.loaded.Plugins[0].Current()
			a.loaded.Close()
			select {
			case <-first.Done():
			case <-time.After(bound):
				t.Fatal("a session's own process outlived the session")
			}
			if got := countOf(t, b.call(t, "Count"), "b"); got != "count=2" {
				t.Fatalf("b after a closed: %s", got)
			}
		})
	}
}

func TestKey(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	base := plugin.Config{Name: "p", Path: "/bin/p", Env: []string{"TOKEN"}, Getenv: env("x")}
	same := base
	same.Logger = nil
	otherEnv := base
	otherEnv.Getenv = env("y")
	otherPin := base
	otherPin.SHA256 = "abc"
	otherArgs := base
	otherArgs.Args = []string{"plugin-serve", "q"}
	sandboxed := base
	sandboxed.Sandbox = &sandbox.Policy{}
	remote := base
	remote.Remote = &plugin.Remote{Addr: "h:1"}
	if pluginpool.Key(base) == "" || pluginpool.Key(base) != pluginpool.Key(same) {
		t.Fatal("one plugin launched the same way: different keys")
	}
	for name, cfg := range map[string]plugin.Config{"environment": otherEnv, "pin": otherPin, "arguments": otherArgs} {
		if pluginpool.Key(cfg) == pluginpool.Key(base) {
			t.Errorf("another %s, the same key", name)
		}
	}
	for name, cfg := range map[string]plugin.Config{"sandboxed": sandboxed, "remote": remote} {
		if k := pluginpool.Key(cfg); k != "" {
			t.Errorf("%s plugin: key %q, want none (never shared)", name, k)
		}
	}
}

func TestLaunchFailureIsEachSessions(t *testing.T) {
	pool := pluginpool.New()
	t.Cleanup(pool.Close)
	cfg := plugin.Config{Name: "ghost", Path: filepath.Join(t.TempDir(), "missing")}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = pool.Acquire(context.Background(), cfg)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "plugin ghost: binary not found") {
			t.Errorf("acquire %d: %v", i, err)
		}
	}
	if pool.Processes() != 0 {
		t.Fatal("a failed launch is in the pool")
	}
	pool.Close()
	if _, err := pool.Acquire(context.Background(), plugin.Config{Name: "sessions", Path: binary(t)}); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("acquire on a closed pool: %v", err)
	}
}

// TestCrashWhileThreeSessionsCall: the shared process crashes while each
// of three sessions has a call in it. Each of those calls fails cleanly
// with the plugin's last words; each session's next call restarts the
// process (once) and loads the session's tools again; a session of
// another process is unaffected throughout.
func TestCrashWhileThreeSessionsCall(t *testing.T) {
	bin := binary(t)
	pool := pluginpool.New()
	t.Cleanup(pool.Close)
	cfg := plugin.Config{Name: "sessions", Path: bin}
	ss := []*session{open(t, pool, "a", cfg), open(t, pool, "b", cfg), open(t, pool, "c", cfg)}
	other := open(t, pool, "other", plugin.Config{Name: "sessions", Path: bin, Env: []string{"KOSONG_TEST_ALONE"},
		Getenv: func(k string) string { return map[string]string{"KOSONG_TEST_ALONE": "1"}[k] }})
	if got := countOf(t, other.call(t, "Count"), "other"); got != "count=1" {
		t.Fatalf("other: %s", got)
	}
	otherPid := other.pid(t)
	first := ss[0].loaded.Plugins[0].Current()

	results := make([]toolset.Result, len(ss))
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = s.call(t, "Block") }()
	}
	// Each Block reports progress on its own session's capability
	// connection once it runs.
	for _, s := range ss {
		select {
		case msg := <-s.progress:
			if msg != "blocking" {
				t.Fatalf("session %s progress: %q", s.id, msg)
			}
		case <-time.After(bound):
			t.Fatalf("session %s: Block did not start", s.id)
		}
	}
	if r := ss[0].call(t, "Crash"); !r.Runtime || !strings.Contains(r.Message, "plugin sessions stopped during the call: panic: crashing on purpose") {
		t.Fatalf("crash: %+v", r)
	}
	wg.Wait()
	for i, r := range results {
		if !r.Runtime || !strings.Contains(r.Message, "plugin sessions stopped during the call: panic: crashing on purpose") {
			t.Errorf("session %s's call in flight: %+v", ss[i].id, r)
		}
	}
	// Later calls work, in one new process, each session with its own
	// load again.
	for _, s := range ss {
		if got := countOf(t, s.call(t, "Count"), s.id); got != "count=1" {
			t.Fatalf("session %s after the restart: %s", s.id, got)
		}
	}
	if got := countOf(t, ss[1].call(t, "Count"), "b"); got != "count=2" {
		t.Fatalf("b's second call after the restart: %s", got)
	}
	pids := map[int]bool{}
	for _, s := range ss {
		pids[s.pid(t)] = true
	}
	if len(pids) != 1 || pids[first.Pid()] {
		t.Fatalf("after the crash the sessions run in %v (the crashed one was %d): want one new process", pids, first.Pid())
	}
	if n := processes(t, bin); n != 2 && n != -1 { // the shared one and other's own
		t.Fatalf("%d processes of %s, want 2", n, bin)
	}
	if got := countOf(t, other.call(t, "Count"), "other"); got != "count=2" || other.pid(t) != otherPid {
		t.Fatalf("the session of another process was disturbed: %s, pid %d (was %d)", got, other.pid(t), otherPid)
	}
}
