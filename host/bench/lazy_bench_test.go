//go:build unix

package bench

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFirstRequestLazyVsEager: the time from exec of `kosong-host
// run -p` (the default agent, a fake model server that records the first
// request's arrival and answers with text) to the first model request,
// and the CPU of the whole one-turn run (the host and every plugin it
// started and reaped: the rusage of the child), with plugins started when
// first needed (the declaration cache kept by a first run) and with
// --eager-plugins, in interleaved rounds; medians, as ratios lazy/eager.
func BenchmarkFirstRequestLazyVsEager(b *testing.B) {
	host := hostBinary(b)
	arrived := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- time.Now():
		default:
		}
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}`+"\n\n")
			io.WriteString(w, `data: {"id":"1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	home := b.TempDir()
	work := b.TempDir()
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"OPENAI_API_KEY=bench"}
	// run returns the time to the first request and the CPU of the run.
	run := func(eager bool) (time.Duration, time.Duration) {
		args := []string{"run", "--provider", "openai", "--base-url", srv.URL + "/v1", "--model", "bench", "--yolo", "-p", "hi"}
		if eager {
			args = append([]string{"--eager-plugins"}, args...)
		}
		cmd := exec.Command(host, args...)
		cmd.Dir, cmd.Env = work, env
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		select {
		case <-arrived:
		default:
		}
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("kosong-host %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		var at time.Time
		select {
		case at = <-arrived:
		default:
			b.Fatalf("no model request:\n%s", out.String())
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		return at.Sub(start), cpu
	}
	run(false) // keeps the declarations
	const rounds = 7
	var lazyT, eagerT, lazyC, eagerC []time.Duration
	b.ResetTimer()
	for range rounds {
		t, c := run(false)
		lazyT, lazyC = append(lazyT, t), append(lazyC, c)
		t, c = run(true)
		eagerT, eagerC = append(eagerT, t), append(eagerC, c)
	}
	b.StopTimer()
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	lt, et, lc, ec := med(lazyT), med(eagerT), med(lazyC), med(eagerC)
	b.ReportMetric(float64(lt)/float64(et), "lazy/eager-first-request")
	b.ReportMetric(float64(lc)/float64(ec), "lazy/eager-cpu")
	report(b, "first model request after exec, default agent, run -p (%d interleaved rounds, medians):", rounds)
	report(b, "  lazy plugins (declarations kept): %6.0f ms, CPU of the run %6.0f ms", ms(lt), ms(lc))
	report(b, "  --eager-plugins                 : %6.0f ms, CPU of the run %6.0f ms", ms(et), ms(ec))
	report(b, "  lazy / eager: first request %.2f, CPU %.2f", float64(lt)/float64(et), float64(lc)/float64(ec))
}
