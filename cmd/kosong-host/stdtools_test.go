package main_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestStandardToolsThroughTheHost calls every standard tool of the
// repository's agent through `tools call`, in a temporary work dir.
func TestStandardToolsThroughTheHost(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><body><h1>Release notes</h1><p>Version <b>2</b> is out.</p></body></html>"))
	}))
	defer web.Close()
	work := writeFiles(t, map[string]string{
		"notes.txt":   "alpha\nbeta\ngamma\n",
		"src/main.go": "package main\n\nfunc main() { println(\"needle\") }\n",
	})
	agentPath := filepath.Join(testbin.Root(), "agent.yaml")
	tests := []struct {
		name, tool, args string
		yolo             bool
		code             int
		stdoutHas        string
		stderrHas        string
		check            func(t *testing.T)
	}{
		{"Echo", "Echo", `{"text":"hi"}`, false, 0, "hi", "", nil},
		{"Shell", "Shell", `{"command":"echo shell-$((6*7))"}`, true, 0, "shell-42", "", nil},
		{"Shell failing", "Shell", `{"command":"echo oops; exit 3"}`, true, 1, "oops", "Command failed with exit code 3", nil},
		{"Shell rejected without --yolo", "Shell", `{"command":"touch should-not-exist"}`, false, 1, "",
			"The tool call is rejected by the user. Stop what you are doing and wait for the user to tell you how to proceed.",
			func(t *testing.T) {
				if _, err := os.Stat(filepath.Join(work, "should-not-exist")); err == nil {
					t.Fatal("a rejected command ran")
				}
			}},
		{"ReadFile", "ReadFile", `{"path":"notes.txt","line_offset":2}`, false, 0, "beta", "", nil},
		{"ReadFile missing", "ReadFile", `{"path":"nope.txt"}`, false, 1, "", "nope.txt", nil},
		{"WriteFile", "WriteFile", `{"path":"out.txt","content":"written\n"}`, true, 0, "", "", func(t *testing.T) {
			if b, _ := os.ReadFile(filepath.Join(work, "out.txt")); string(b) != "written\n" {
				t.Fatalf("out.txt = %q", b)
			}
		}},
		{"WriteFile rejected without --yolo", "WriteFile", `{"path":"rejected.txt","content":"x"}`, false, 1, "",
			"The tool call is rejected by the user.", func(t *testing.T) {
				if _, err := os.Stat(filepath.Join(work, "rejected.txt")); err == nil {
					t.Fatal("a rejected write happened")
				}
			}},
		{"StrReplaceFile", "StrReplaceFile", `{"path":"notes.txt","edit":{"old":"beta","new":"BETA"}}`, true, 0, "", "", func(t *testing.T) {
			if b, _ := os.ReadFile(filepath.Join(work, "notes.txt")); string(b) != "alpha\nBETA\ngamma\n" {
				t.Fatalf("notes.txt = %q", b)
			}
		}},
		{"StrReplaceFile rejected without --yolo", "StrReplaceFile", `{"path":"notes.txt","edit":{"old":"alpha","new":"x"}}`, false, 1, "",
			"The tool call is rejected by the user.", nil},
		{"Glob", "Glob", `{"pattern":"**/*.go"}`, false, 0, "src/main.go", "", nil},
		{"Grep", "Grep", `{"pattern":"needle","output_mode":"content"}`, false, 0, "src/main.go", "", nil},
		{"FetchURL refuses a loopback address", "FetchURL", `{"url":"` + web.URL + `"}`, false, 1, "",
			"FetchURL refused to connect to " + strings.TrimPrefix(web.URL, "http://") + ", a loopback address", nil},
		{"SetTodoList", "SetTodoList", `{"todos":[{"title":"write tests","status":"in_progress"}]}`, false, 0, "write tests", "", nil},
		{"Think", "Think", `{"thought":"hmm"}`, false, 0, "", "", nil},
		{"SearchWeb is skipped", "SearchWeb", `{"query":"x"}`, false, 2, "", "Tool `SearchWeb` not found", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--agent", agentPath, "tools", "call", tt.tool, tt.args}
			if tt.yolo {
				args = append(args, "--yolo")
			}
			r := runHost(t, work, "", args...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdoutHas) || !strings.Contains(r.stderr, tt.stderrHas) {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
			}
			if tt.check != nil {
				tt.check(t)
			}
		})
	}
}
