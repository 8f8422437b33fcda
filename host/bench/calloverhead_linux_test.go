//go:build linux

package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCallOverhead: the agent loop's cost per tool call, end to end:
// `kosong-host run` of a scripted model (no delays) that makes ten
// sequential Echo calls (one a turn) against one that makes one, in
// alternating rounds; the overhead of a call is (ten - one) / 9, in wall
// time and in CPU (the run and its plugins). It is shown beside the one-call
// run, which is mostly the start.
func BenchmarkCallOverhead(b *testing.B) {
	agentPath, _ := echoAgent(b)
	host := hostBinary(b)
	dir := b.TempDir()
	script := func(n int) string {
		var sb strings.Builder
		sb.WriteString("delay: 0s\nturns:\n")
		for i := range n {
			fmt.Fprintf(&sb, "  - tool_calls:\n      - {id: c%d, name: Echo, arguments: {text: hi}}\n", i)
		}
		sb.WriteString("  - text: done\n")
		path := filepath.Join(dir, fmt.Sprintf("script%d.yaml", n))
		if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		return path
	}
	one, ten := script(1), script(10)
	run := func(s string) (wall, cpu time.Duration) {
		cmd := exec.Command(host, "--trust", "--agent", agentPath, "run", "--provider", "scripted", "--script", s, "--yolo", "-p", "go")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KOSONG_PLUGIN_PATH=", "XDG_STATE_HOME="+dir)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall = time.Since(start)
		if err != nil || !strings.Contains(string(out), "done") {
			b.Fatalf("run %s: %v\n%s", filepath.Base(s), err, out)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return wall, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	const rounds = 7
	var walls, cpus [2][]time.Duration
	run(one) // warm up
	b.ResetTimer()
	for range rounds {
		for i, s := range []string{one, ten} {
			w, c := run(s)
			walls[i], cpus[i] = append(walls[i], w), append(cpus[i], c)
		}
	}
	b.StopTimer()
	median := func(d []time.Duration) time.Duration { d = slices.Clone(d); slices.Sort(d); return d[len(d)/2] }
	w1, w10, c1, c10 := median(walls[0]), median(walls[1]), median(cpus[0]), median(cpus[1])
	perWall, perCPU := (w10-w1)/9, (c10-c1)/9
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
	b.ReportMetric(ms(perWall), "per-call-ms")
	b.ReportMetric(float64(perWall)/float64(w1), "per-call/one-call-run")
	report(b, "loop overhead per tool call (kosong-host run, scripted model, Echo plugin; medians of %d rounds):", rounds)
	report(b, "  one call: %.1f ms wall, %.1f ms CPU; ten sequential calls: %.1f ms wall, %.1f ms CPU", ms(w1), ms(c1), ms(w10), ms(c10))
	report(b, "  per extra call, (ten - one) / 9: %.2f ms wall (%.3fx the one-call run), %.2f ms CPU (%.3fx)",
		ms(perWall), float64(perWall)/float64(w1), ms(perCPU), float64(perCPU)/float64(c1))
}
