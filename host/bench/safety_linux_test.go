//go:build linux

package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/plugin"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// loadPlugins loads each binary as a plugin of its own (named p0, p1...)
// and returns the tool named tool of each.
func loadPlugins(b *testing.B, tool string, bins ...string) ([]toolset.Tool, *plugin.Loaded) {
	b.Helper()
	var specs []plugin.Spec
	for i, bin := range bins {
		specs = append(specs, plugin.Spec{Config: plugin.Config{Name: fmt.Sprintf("p%d", i), Path: bin, StartTimeout: time.Minute},
			Tools: []string{tool}})
	}
	l := plugin.Load(context.Background(), specs, plugin.Options{SessionID: "bench", WorkDir: b.TempDir(), StateDir: b.TempDir(),
		Decider: approval.Yolo{}, Env: plugin.Environment("", os.Getenv), RestartBackoff: time.Millisecond})
	if len(l.Failures) > 0 {
		b.Fatal(l.Failures)
	}
	var tools []toolset.Tool
	for _, st := range l.Status {
		if st.Tool != nil {
			tools = append(tools, st.Tool)
		}
	}
	if len(tools) != len(bins) {
		b.Fatalf("%d tools loaded, want %d", len(tools), len(bins))
	}
	return tools, l
}

// BenchmarkSafety measures the figures of the safety promises: throughput
// of many concurrent calls across plugins, the latency of a restart after a
// crash, and the memory of a host running the default agent.
func BenchmarkSafety(b *testing.B) {
	echo, err := testbin.Build("plugins/echo/cmd/kosong-plugin-echo", "plugins/kosong-plugin-echo")
	if err != nil {
		b.Fatal(err)
	}
	cc, err := testbin.Build("host/testdata/plugins/capcheck", "capcheck")
	if err != nil {
		b.Fatal(err)
	}
	host, err := testbin.Build("cmd/kosong-host", "kosong-host")
	if err != nil {
		b.Fatal(err)
	}

	// 1,000 concurrent calls across 4 plugins (250 each), in rounds.
	const concurrent, nplugins, rounds = 1000, 4, 5
	tools, l := loadPlugins(b, "Echo", slices.Repeat([]string{echo}, nplugins)...)
	var rates []float64
	for r := range rounds + 1 {
		var wg sync.WaitGroup
		var failed sync.Map
		t0 := time.Now()
		for i := range concurrent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := tools[i%nplugins].Call(context.Background(), strconv.Itoa(i), []byte(`{"text":"x"}`))
				if res.IsError() {
					failed.Store(i, res.Message)
				}
			}()
		}
		wg.Wait()
		wall := time.Since(t0)
		failed.Range(func(k, v any) bool { b.Fatalf("call %v: %v", k, v); return false })
		if r > 0 { // the first round warms up
			rates = append(rates, concurrent/wall.Seconds())
		}
	}
	l.Close()
	slices.Sort(rates)

	// Restart latency: the plugin process is killed (as a crash would end
	// it); the clock runs from the kill to the next successful call, which
	// restarts it. One restart per load, so the restart policy's backoff
	// never applies.
	var restarts []time.Duration
	for range 6 {
		tools, l := loadPlugins(b, "Sleep", cc)
		if r := tools[0].Call(context.Background(), "warm", []byte(`{"ms":0}`)); r.IsError() {
			b.Fatal(r.Message)
		}
		pid := l.Plugins[0].Current().Pid()
		t0 := time.Now()
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for {
			r := tools[0].Call(context.Background(), "after", []byte(`{"ms":0}`))
			if !r.IsError() {
				break
			}
			if time.Since(t0) > time.Minute {
				b.Fatalf("no successful call a minute after the crash: %s", r.Message)
			}
		}
		restarts = append(restarts, time.Since(t0))
		l.Close()
	}
	restartP50, _ := percentiles(restarts)

	// Memory: the real kosong-host with the repository's agent.yaml (the
	// default agent's tools, all built-in), idle in a Shell call.
	mem := hostMemory(b, host)

	b.ReportMetric(rates[len(rates)/2], "calls/s")
	b.ReportMetric(ms(restartP50), "restart-p50-ms")
	b.ReportMetric(float64(mem[0].rss)/1024, "host-rss-MB")
	report(b, "safety figures:")
	report(b, "  %d concurrent calls across %d plugins: %.0f calls/s (median of %d rounds; min %.0f, max %.0f)",
		concurrent, nplugins, rates[len(rates)/2], len(rates), rates[0], rates[len(rates)-1])
	report(b, "  restart after a crash (kill -> next successful call): p50 %.1f ms, max %.1f ms over %d restarts",
		ms(restartP50), ms(slices.Max(restarts)), len(restarts))
	report(b, "  memory with the default agent (agent.yaml, built-in plugins), RSS / PSS:")
	var rss, pss int64
	for _, m := range mem {
		report(b, "    %-22s %7.1f MB / %7.1f MB", m.name, float64(m.rss)/1024, float64(m.pss)/1024)
		rss, pss = rss+m.rss, pss+m.pss
	}
	report(b, "    %-22s %7.1f MB / %7.1f MB (PSS counts shared pages once across them)", "all", float64(rss)/1024, float64(pss)/1024)
}

type memory struct {
	name     string
	rss, pss int64 // KB
}

// hostMemory runs kosong-host with the repository's agent.yaml in a Shell
// call that waits, and reads the RSS and PSS of the host and of each of its
// plugin processes.
func hostMemory(b *testing.B, host string) []memory {
	root := testbin.Root()
	dir := b.TempDir()
	// A copy of the binary with no plugins/ folder beside it, as after make
	// build: the agent's bare plugin names are its built-ins.
	data, err := os.ReadFile(host)
	if err != nil {
		b.Fatal(err)
	}
	host = filepath.Join(dir, "kosong-host")
	if err := os.WriteFile(host, data, 0o755); err != nil {
		b.Fatal(err)
	}
	ready := filepath.Join(dir, "ready")
	cmd := exec.Command(host, "--agent", filepath.Join(root, "agent.yaml"), "tools", "call", "Shell",
		fmt.Sprintf(`{"command":"touch %s; sleep 120","timeout":120}`, ready), "--yolo")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KOSONG_PLUGIN_PATH=", "XDG_STATE_HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the host did not get to the Shell call: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // let the loads settle
	out := []memory{readMemory("kosong-host (host)", cmd.Process.Pid)}
	var plugins []memory
	for _, pid := range childrenOf(cmd.Process.Pid) {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		name := filepath.Base(args[0])
		if len(args) > 2 && args[1] == "plugin-serve" {
			name = "plugin " + args[len(args)-1] // plugin-serve [--sandbox RULES] NAME
		}
		plugins = append(plugins, readMemory(name, pid))
	}
	slices.SortFunc(plugins, func(a, b memory) int { return strings.Compare(a.name, b.name) })
	return append(out, plugins...)
}

func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// readMemory reads VmRSS from /proc/PID/status and Pss from
// /proc/PID/smaps_rollup, in KB. (The host is non-dumpable: reading its
// smaps_rollup takes CAP_SYS_PTRACE, which root has.)
func readMemory(name string, pid int) memory {
	m := memory{name: name}
	m.rss = field(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:")
	m.pss = field(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:")
	return m
}

func field(path, key string) int64 {
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, key) {
			f := strings.Fields(line)
			if len(f) >= 2 {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
	}
	return -1
}
