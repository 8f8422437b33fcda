package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/serverclient"
)

// serveScript is the model's side of each session's turn: ten tool calls
// of the default agent, one a step, then the answer.
const serveScript = `delay: 0s
turns:
  - tool_calls: [{id: c1, name: Glob, arguments: {pattern: "**/*.go"}}]
  - tool_calls: [{id: c2, name: ReadFile, arguments: {path: README.md}}]
  - tool_calls: [{id: c3, name: Grep, arguments: {pattern: "func", path: "."}}]
  - tool_calls: [{id: c4, name: Think, arguments: {thought: "One Go file."}}]
  - tool_calls: [{id: c5, name: SetTodoList, arguments: {todos: [{title: Read it, status: in_progress}]}}]
  - tool_calls: [{id: c6, name: Shell, arguments: {command: "echo hello"}}]
  - tool_calls: [{id: c7, name: ReadFile, arguments: {path: main.go}}]
  - tool_calls: [{id: c8, name: Glob, arguments: {pattern: "*"}}]
  - tool_calls: [{id: c9, name: SetTodoList, arguments: {todos: [{title: Read it, status: done}]}}]
  - tool_calls: [{id: c10, name: Think, arguments: {thought: "Done."}}]
  - text: The repository has one Go file.
`

// startLimit is the plugin start timeout of the hosts the benchmark runs:
// dozens of plugins start at once on a small machine.
const startLimit = "2m"

// serveToolCalls is how many tool calls serveScript makes in a turn.
const serveToolCalls = 10

// The size of BenchmarkServe: KOSONG_BENCH_SESSIONS concurrent sessions
// (default 50), then KOSONG_BENCH_IDLE more idle ones (default 10) for the
// memory of an idle session.
const (
	sessionsEnv = "KOSONG_BENCH_SESSIONS"
	idleEnv     = "KOSONG_BENCH_IDLE"
)

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// serveRepo writes the repository the sessions work in: two files, the
// agent (the built-in default) and the script.
func serveRepo(b *testing.B) (repo, agentFile, script string) {
	repo = b.TempDir()
	files := map[string]string{
		"README.md":   "# bench repository\nThe sessions of the serve benchmark work here.\n",
		"main.go":     "package main\n\nfunc main() { println(greeting()) }\n\nfunc greeting() string { return \"hello\" }\n",
		"agent.yaml":  "version: 1\nagent:\n  extend: default\n  name: bench\n",
		"script.yaml": serveScript,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return repo, filepath.Join(repo, "agent.yaml"), filepath.Join(repo, "script.yaml")
}

// BenchmarkServe: N sessions of one `kosong-host serve` process (its
// plugin processes shared between the sessions, host/pluginpool), each
// running a 10-tool-call scripted turn at once, against the same work done
// by N separate `kosong-host run -p` processes (2 per core at a time: more
// only queue on the CPU), in the same run. It reports both wall times and
// their ratio, the plugin processes of each, the server's RSS and PSS with
// its plugins, the p50/p99 latency of GET /v1/sessions during the load,
// and what one more idle session costs (PSS of the server and its
// plugins) beside one idle separate host.
func BenchmarkServe(b *testing.B) {
	n := envInt(b, sessionsEnv, 50)
	idle := envInt(b, idleEnv, 10)
	host := hostBinary(b)
	repo, agentFile, script := serveRepo(b)
	state := b.TempDir()
	env := append(os.Environ(), "KOSONG_PLUGIN_PATH=", "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+filepath.Join(state, "config"))

	// The reference: N separate hosts, each its own plugins.
	par := 2 * runtime.NumCPU()
	t0 := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	var failed atomic.Value
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cmd := exec.Command(host, "run", "--agent", agentFile, "--provider", "scripted", "--script", script,
				"--yolo", "--plugin-start-timeout", startLimit, "-p", "Look around.")
			cmd.Dir, cmd.Env = repo, env
			if out, err := cmd.CombinedOutput(); err != nil {
				failed.Store(fmt.Sprintf("run -p: %v: %s", err, out))
			}
		}()
	}
	wg.Wait()
	separate := time.Since(t0)
	if msg := failed.Load(); msg != nil {
		b.Fatal(msg)
	}
	one := idleHost(b, host, repo, agentFile, env)

	// The server.
	srv := startServe(b, host, repo, script, env)
	c := srv.client
	ctx := context.Background()
	var peak atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	var latencies []time.Duration
	go func() {
		// During the load: the latency of GET /v1/sessions, and the most
		// plugin processes seen.
		defer close(sampled)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopSampling:
				return
			case <-t.C:
			}
			t0 := time.Now()
			if _, err := c.Sessions(ctx); err == nil {
				latencies = append(latencies, time.Since(t0))
			}
			if i%10 == 0 {
				if k := int64(len(childrenOf(srv.pid))); k > peak.Load() {
					peak.Store(k)
				}
			}
		}
	}()
	t0 = time.Now()
	ids := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := serveTurn(ctx, c, repo, agentFile, &ids[i]); err != nil {
				failed.Store(err.Error())
			}
		}()
	}
	wg.Wait()
	shared := time.Since(t0)
	close(stopSampling)
	<-sampled
	if msg := failed.Load(); msg != nil {
		b.Fatal(msg)
	}
	for _, id := range ids {
		h, err := c.History(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		if got := toolResults(h); got != serveToolCalls {
			b.Fatalf("session %s: %d tool results, want %d", id, got, serveToolCalls)
		}
	}
	settle()
	loaded := serverMemory(srv.pid)
	procs := len(childrenOf(srv.pid))

	// Idle sessions: what one more costs.
	for range idle {
		if _, err := c.CreateSession(ctx, serverclient.CreateSession{Cwd: repo, Agent: agentFile, Mode: serverclient.ModeYolo}); err != nil {
			b.Fatal(err)
		}
	}
	settle()
	more := serverMemory(srv.pid)
	perIdle := (more.pss - loaded.pss) / int64(idle)
	p50, p99 := percentiles(latencies)

	b.ReportMetric(shared.Seconds()/separate.Seconds(), "serve/separate-wall")
	b.ReportMetric(float64(procs), "plugin-processes")
	b.ReportMetric(float64(loaded.pss)/1024, "serve-pss-MB")
	b.ReportMetric(float64(perIdle)/1024, "idle-session-pss-MB")
	report(b, "serve figures (%d sessions, each a %d-tool-call scripted turn, in one repository):", n, serveToolCalls)
	report(b, "  wall: %d sessions of one serve at once %.1f s; %d separate `run -p` processes (%d at a time) %.1f s: ratio %.2f",
		n, shared.Seconds(), n, par, separate.Seconds(), shared.Seconds()/separate.Seconds())
	report(b, "  plugin processes: %d under serve after the load (most seen during it %d); one separate host has %d, so %d separate hosts %d",
		procs, peak.Load(), one.plugins, n, n*one.plugins)
	report(b, "  serve process RSS / PSS: %.1f MB / %.1f MB; with its plugins: %.1f MB / %.1f MB (%d sessions, idle after the load)",
		float64(loaded.server.rss)/1024, float64(loaded.server.pss)/1024, float64(loaded.rss)/1024, float64(loaded.pss)/1024, n)
	report(b, "  GET /v1/sessions during the load: p50 %.1f ms, p99 %.1f ms (%d calls)", ms(p50), ms(p99), len(latencies))
	report(b, "  one more idle session: %.1f MB PSS (serve and its plugins, over %d more); one idle separate host with its plugins: %.1f MB PSS: ratio %.2f",
		float64(perIdle)/1024, idle, float64(one.pss)/1024, float64(perIdle)/float64(one.pss))
}

// serveTurn creates a session and runs one turn in it, to its end.
func serveTurn(ctx context.Context, c *serverclient.Client, repo, agentFile string, id *string) error {
	s, err := c.CreateSession(ctx, serverclient.CreateSession{Cwd: repo, Agent: agentFile, Mode: serverclient.ModeYolo})
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	*id = s.ID
	if _, err := c.Send(ctx, s.ID, serverclient.Message{Text: "Look around."}); err != nil {
		return fmt.Errorf("session %s: send: %w", s.ID, err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		s, err := c.Session(ctx, s.ID)
		if err != nil {
			return fmt.Errorf("session %s: %w", s.ID, err)
		}
		if s.Status == serverclient.StatusIdle {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session %s: the turn did not end within 5 minutes", s.ID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// toolResults counts the tool results of a session's history.
func toolResults(h serverclient.History) int {
	n := 0
	for _, m := range h.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}

// settle lets the plugins' loads and collections settle before memory is
// read.
func settle() { time.Sleep(time.Second) }

type served struct {
	client *serverclient.Client
	pid    int
}

// startServe starts `kosong-host serve` on a unix socket, with the
// scripted provider, until the benchmark ends.
func startServe(b *testing.B, host, repo, script string, env []string) served {
	sock := filepath.Join(b.TempDir(), "serve.sock")
	cmd := exec.Command(host, "serve", "--listen", sock, "--token-env", "KOSONG_BENCH_TOKEN",
		"--provider", "scripted", "--script", script, "--yolo", "--max-sessions", "1000", "--plugin-start-timeout", startLimit)
	cmd.Dir = repo
	cmd.Env = append(env, "KOSONG_BENCH_TOKEN=bench-token-0123456789")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
		}
	})
	lines := bufio.NewScanner(stderr)
	var seen bytes.Buffer
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "listening on") {
			go func() {
				for lines.Scan() {
				}
			}()
			c, err := serverclient.New("unix://"+sock, "bench-token-0123456789", nil)
			if err != nil {
				b.Fatal(err)
			}
			return served{client: c, pid: cmd.Process.Pid}
		}
	}
	b.Fatalf("kosong-host serve did not start: %s", seen.String())
	return served{}
}

// hostTotal is the memory of a host and its plugin processes.
type hostTotal struct {
	server   memory
	rss, pss int64 // KB, with the plugins
	plugins  int
}

func serverMemory(pid int) hostTotal {
	t := hostTotal{server: readMemory("serve", pid)}
	t.rss, t.pss = t.server.rss, t.server.pss
	for _, child := range childrenOf(pid) {
		m := readMemory("plugin", child)
		if m.rss < 0 || m.pss < 0 {
			continue // gone meanwhile
		}
		t.rss, t.pss, t.plugins = t.rss+m.rss, t.pss+m.pss, t.plugins+1
	}
	return t
}

// idleHost measures one separate host with the bench agent, idle in a
// Shell call of its turn: its memory with its plugins, and how many
// plugin processes it runs.
func idleHost(b *testing.B, host, repo, agentFile string, env []string) hostTotal {
	dir := b.TempDir()
	ready := filepath.Join(dir, "ready")
	script := filepath.Join(dir, "idle.yaml")
	body := fmt.Sprintf("turns:\n  - tool_calls: [{id: c1, name: Shell, arguments: {command: %q, timeout: 120}}]\n  - text: done\n",
		"touch "+ready+"; sleep 120")
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(host, "run", "--agent", agentFile, "--provider", "scripted", "--script", script, "--yolo",
		"--plugin-start-timeout", startLimit, "-p", "Wait.")
	cmd.Dir, cmd.Env = repo, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the separate host did not get to its Shell call: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	settle()
	t := serverMemory(cmd.Process.Pid)
	if t.plugins == 0 {
		b.Fatal("the separate host runs no plugin process")
	}
	return t
}
