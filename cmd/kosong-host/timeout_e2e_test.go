package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// idle is the wait the stalled-server tests configure: short, so that three
// attempts take seconds.
const idle = 500 * time.Millisecond

// stallBound is how long a run against a server that stalls every attempt
// may take: each attempt's wait, the backoff between attempts (at most
// the policy's cap each), and the start of the host and its plugins on a
// busy machine.
func stallBound() time.Duration {
	p := providers.DefaultRetryPolicy
	return time.Duration(p.Attempts)*idle + time.Duration(p.Attempts-1)*p.Max + 20*time.Second
}

// TestRunStalledServerExit75: a server that never sends headers, one that
// sends a chunk and goes silent, and one that goes silent between two
// fragments of a tool call's arguments: each attempt times out after the
// configured wait, is retried, and after the last attempt run exits 75
// with an error saying what stalled and for how long; the cut-off call
// never runs.
func TestRunStalledServerExit75(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran.txt")
	tests := []struct {
		name string
		resp openaitest.Response
		args []string
		want string
	}{
		{"never sends headers", openaitest.Response{StallHeaders: true}, nil,
			"no response from the server within 500ms (connect_timeout)"},
		{"a chunk, then silence", openaitest.Response{Text: []string{"Thinking", " more"}, StallAfter: 2},
			[]string{"--stream-idle-timeout", idle.String()}, "no data from the stream for 500ms (stream_idle_timeout)"},
		{"silence between two tool-call fragments", openaitest.Response{
			ToolCalls: []openaitest.ToolCall{{Name: "Shell", Arguments: `{"command":"echo ran >> ` + marker + `"}`}},
			Quirks:    openaitest.Quirks{SplitArguments: 8}, StallAfter: 3},
			[]string{"--stream-idle-timeout", idle.String()}, "no data from the stream for 500ms (stream_idle_timeout)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.NewServer(t, tt.resp, tt.resp, tt.resp)
			// The connect timeout comes from the configuration file, the
			// idle one from the flag.
			config := writeFiles(t, map[string]string{"config.yaml": "providers:\n  openai:\n    type: openai\n    connect_timeout: 500ms\n"})
			kosongHost(t) // built before the clock starts
			start := time.Now()
			args := append([]string{"run", "--config", filepath.Join(config, "config.yaml"), "-p", "Run it.", "--yolo"}, tt.args...)
			r := runWithEnv(t, []string{"OPENAI_API_KEY=x", "OPENAI_BASE_URL=" + srv.BaseURL()}, args...)
			elapsed := time.Since(start)
			t.Logf("stderr:\n%s", r.stderr)
			if r.code != 75 || !strings.Contains(r.stderr, "openai: timed out: "+tt.want) {
				t.Fatalf("exit %d, want 75 with %q\nstderr %s", r.code, tt.want, r.stderr)
			}
			if n := len(srv.Requests()); n != providers.DefaultRetryPolicy.Attempts {
				t.Errorf("%d attempts, want %d", n, providers.DefaultRetryPolicy.Attempts)
			}
			attempts := time.Duration(providers.DefaultRetryPolicy.Attempts)
			if elapsed < attempts*idle || elapsed > stallBound() {
				t.Errorf("run took %s, want between %s and %s", elapsed, attempts*idle, stallBound())
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the cut-off tool call ran")
			}
		})
	}
}

// TestRunRateLimitThenSuccess: a 429 is retried and the retry's answer is
// the turn's, end to end.
func TestRunRateLimitThenSuccess(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Status: 429}, openaitest.Response{Text: []string{"Recovered", " after a retry."}})
	r := runWithEnv(t, []string{"OPENAI_API_KEY=x", "OPENAI_BASE_URL=" + srv.BaseURL()}, "run", "-p", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "Recovered after a retry.") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

// TestRunInterruptDuringStall: Ctrl-C while the stream is silent ends the
// run at once (exit 130), however long the idle timeout.
func TestRunInterruptDuringStall(t *testing.T) {
	streaming := make(chan struct{}, 1)
	srv := openaitest.NewServer(t, openaitest.Response{Text: []string{"Thinking", " more"}, StallAfter: 2,
		AfterChunk: func(_ context.Context, n int, _ string) {
			if n == 1 {
				streaming <- struct{}{}
			}
		}})
	cmd := exec.Command(kosongHost(t), "--trust", "run", "-p", "hi", "--stream-idle-timeout", "1h")
	cmd.Dir = testbin.Root()
	cmd.Env = append(os.Environ(), "KOSONG_PLUGIN_PATH=", "KIMI_API_KEY=", "ANTHROPIC_API_KEY=", "GOOGLE_API_KEY=", "GEMINI_API_KEY=",
		"XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(), "OPENAI_API_KEY=x", "OPENAI_BASE_URL="+srv.BaseURL())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-streaming:
	case err := <-done:
		t.Fatalf("run ended before streaming: %v\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the server got no request within 60s")
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("run still waits 30s after SIGINT")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, stderr.String())
	}
	if d := time.Since(sent); d > 10*time.Second {
		t.Errorf("run took %s to end after SIGINT", d)
	}
}

func TestRunBadStreamIdleTimeout(t *testing.T) {
	for _, value := range []string{"-1s", "soon"} {
		r := runWithEnv(t, nil, "run", "--provider", "scripted", "--script", "agents/demo/script.yaml", "-p", "hi", "--stream-idle-timeout", value)
		if r.code != 2 || !strings.Contains(r.stderr, "stream-idle-timeout") {
			t.Errorf("--stream-idle-timeout %s: exit %d stderr %q, want 2 naming the flag", value, r.code, r.stderr)
		}
	}
}
