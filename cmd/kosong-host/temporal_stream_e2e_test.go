package main_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/temporalengine/temporaltest"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestTemporalRunStreams: `run --engine temporal -p --output-format
// stream-json` writes the answer's text events as the model streams them,
// before the result: the model holds its stream after the first word
// until the run's stdout shows it. In text mode stdout is the answer.
func TestTemporalRunStreams(t *testing.T) {
	srv := temporaltest.Start(t)
	tests := []struct {
		name   string
		args   []string
		stream bool
	}{
		{"stream-json", []string{"--output-format", "stream-json"}, true},
		{"text", nil, false},
	}
	// The stream-json run's stdout, which the model waits on.
	live := &notifyWriter{want: `"type":"text"`, seen: make(chan struct{})}
	model := openaitest.NewServer(t, openaitest.Response{Text: []string{"The ", "answer ", "is ", "42."}, AfterChunk: func(ctx context.Context, n int, _ string) {
		if n != 1 { // chunk 0 is the role, 1 the first word
			return
		}
		select {
		case <-live.seen:
		case <-ctx.Done():
		case <-time.After(expectWithin):
		}
	}}, openaitest.Response{Text: []string{"The ", "answer ", "is ", "42."}})
	dir := writeFiles(t, map[string]string{"agent.yaml": echoAgent, "s.md": "hi"})
	const q = "stream"
	startWorker(t, dir, srv.HostPort, q, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.BaseURL()})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout := &notifyWriter{seen: make(chan struct{})}
			if tt.stream {
				stdout = live
			}
			run := exec.Command(kosongHost(t), append([]string{"--trust", "run", "-p", "go", "--engine", "temporal", "--temporal", srv.HostPort,
				"--task-queue", q}, tt.args...)...)
			run.Dir = dir
			run.Env = hostEnv("XDG_STATE_HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
			var stderr bytes.Buffer
			run.Stdout, run.Stderr = stdout, &stderr
			done := make(chan error, 1)
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- run.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("run: %v\nstdout %s\nstderr %s", err, stdout, &stderr)
				}
			case <-time.After(2 * expectWithin):
				_ = run.Process.Kill()
				t.Fatalf("the run did not end\nstdout %s\nstderr %s", stdout, &stderr)
			}
			if !tt.stream {
				if got := stdout.String(); got != "The answer is 42.\n" {
					t.Errorf("stdout %q, want only the answer", got)
				}
				return
			}
			events := streamEvents(t, stdout.String())
			var types []string
			var text strings.Builder
			for _, e := range events {
				typ, _ := e["type"].(string)
				if typ == "text" {
					text.WriteString(e["text"].(string))
				}
				if len(types) == 0 || types[len(types)-1] != typ {
					types = append(types, typ)
				}
			}
			if got, want := strings.Join(types, " "), "session step_start text stop turn_end result"; got != want {
				t.Errorf("event types %s, want %s\n%s", got, want, stdout)
			}
			if got := text.String(); got != "The answer is 42." {
				t.Errorf("the text events make %q", got)
			}
			last := events[len(events)-1]
			if last["text"] != "The answer is 42." || last["exit_code"] != float64(0) || last["session_id"] != events[0]["session_id"] {
				t.Errorf("result %v", last)
			}
		})
	}
}
