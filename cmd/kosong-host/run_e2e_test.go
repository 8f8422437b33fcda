package main_test

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// runWithEnv runs kosong-host in the repository root with extra environment.
func runWithEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runHostEnv(t, testbin.Root(), env, "", args...)
}

func TestRunNoProvider(t *testing.T) {
	r := runWithEnv(t, nil, "run", "-p", "hi")
	if r.code != 2 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"KIMI_API_KEY", "OPENAI_API_KEY", "--provider scripted"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
}

// TestRunOpenAICompatible: a one-shot turn against an OpenAI-compatible
// server, with Kimi-style ids and split, interleaved tool call fragments,
// whose two parallel calls go through real plugins.
func TestRunOpenAICompatible(t *testing.T) {
	srv := openaitest.NewServer(t,
		openaitest.Response{
			Text: []string{"Checking."},
			ToolCalls: []openaitest.ToolCall{
				{Name: "Echo", Arguments: `{"text":"ping"}`},
				{Name: "Shell", Arguments: `{"command":"echo from-shell"}`},
			},
			Quirks: openaitest.Quirks{KimiIDs: true, SplitArguments: 4, Comments: 1, Interleave: true},
		},
		openaitest.Response{Text: []string{"All ", "done."}, Usage: &openaitest.Usage{PromptTokens: 100, CompletionTokens: 5}},
	)
	env := []string{"OPENAI_API_KEY=x", "OPENAI_BASE_URL=" + srv.BaseURL()}
	r := runWithEnv(t, env, "run", "-p", "Say hi through the tools.", "--yolo")
	if r.code != 0 || !strings.Contains(r.stdout, "All done.") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[1].Chat.Messages
	var tools []string
	for _, m := range msgs {
		if m.Role == "tool" {
			tools = append(tools, m.ToolCallID+"="+strings.TrimSpace(m.Text()))
		}
	}
	want := []string{"functions.Echo:0=ping", "functions.Shell:1=from-shell"}
	if strings.Join(tools, "|") != strings.Join(want, "|") {
		t.Fatalf("tool messages %q, want %q", tools, want)
	}
}

func TestRunProviderFailureExit75(t *testing.T) {
	fail := openaitest.Response{Status: 500}
	srv := openaitest.NewServer(t, fail, fail, fail)
	r := runWithEnv(t, []string{"OPENAI_API_KEY=x", "OPENAI_BASE_URL=" + srv.BaseURL()}, "run", "-p", "hi")
	if r.code != 75 || !strings.Contains(r.stderr, "500") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d attempts, want 3", n)
	}
}

func TestRunAuthErrorNamesTheVariable(t *testing.T) {
	srv := openaitest.NewServer(t, openaitest.Response{Status: 401})
	r := runWithEnv(t, []string{"OPENAI_API_KEY=bad", "OPENAI_BASE_URL=" + srv.BaseURL()}, "run", "-p", "hi")
	if r.code == 0 || !strings.Contains(r.stderr, "OPENAI_API_KEY") || len(srv.Requests()) != 1 {
		t.Fatalf("exit %d stderr %q requests %d", r.code, r.stderr, len(srv.Requests()))
	}
}

// TestRunStreamJSON parses the stream-json output back, event by event.
func TestRunStreamJSON(t *testing.T) {
	r := runWithEnv(t, nil, "run", "--provider", "scripted", "--script", "agents/demo/script.yaml", "--yolo",
		"--output-format", "stream-json", "-p", "Show me around.")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	counts := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		typ, _ := ev["type"].(string)
		counts[typ]++
	}
	// The demo: two parallel calls, then one, then the answer.
	if counts["tool_call"] != 3 || counts["tool_result"] != 3 || counts["turn_end"] != 1 || counts["text"] == 0 {
		t.Fatalf("event counts %v\n%s", counts, r.stdout)
	}
}

// TestRunResume: a second run with --resume last sends the first run's turn
// back to the model.
func TestRunResume(t *testing.T) {
	srv := openaitest.NewServer(t,
		openaitest.Response{Text: []string{"The answer is 42."}},
		openaitest.Response{Text: []string{"As I said, 42."}},
	)
	state := t.TempDir()
	env := []string{"OPENAI_API_KEY=x", "OPENAI_BASE_URL=" + srv.BaseURL(), "XDG_STATE_HOME=" + state}
	if r := runWithEnv(t, env, "run", "-p", "What is the answer?"); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	if r := runWithEnv(t, env, "run", "--resume", "last", "-p", "Say it again."); r.code != 0 || !strings.Contains(r.stdout, "As I said, 42.") {
		t.Fatalf("resumed run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var texts []string
	for _, m := range srv.Requests()[1].Chat.Messages {
		texts = append(texts, m.Role+": "+m.Text())
	}
	got := strings.Join(texts, "|")
	for _, want := range []string{"user: What is the answer?", "assistant: The answer is 42.", "user: Say it again."} {
		if !strings.Contains(got, want) {
			t.Errorf("resumed request lacks %q: %s", want, got)
		}
	}
	if r := runWithEnv(t, env, "run", "--resume", "20990101-000000-abcdef", "-p", "x"); r.code != 2 || !strings.Contains(r.stderr, "no session 20990101-000000-abcdef") {
		t.Fatalf("unknown session: %+v", r)
	}
}

// TestRunSubagent: the Agent tool starts the explore subagent of the
// default agent, which uses its own tools and answers.
func TestRunSubagent(t *testing.T) {
	work := writeFiles(t, map[string]string{
		"src/loop.go": "package src\n",
		"script.yaml": `
turns:
  - tool_calls: [{id: a1, name: Agent, arguments: {subagent: explore, prompt: "Which file holds the loop?"}}]
  - tool_calls: [{id: g1, name: Glob, arguments: {pattern: "src/*.go"}}]
  - text: "The loop lives in src/loop.go."
  - text: "The explorer found it in src/loop.go."
`})
	r := runHostEnv(t, work, nil, "", "--agent", filepath.Join(testbin.Root(), "agent.yaml"), "run",
		"--provider", "scripted", "--script", "script.yaml", "--output-format", "stream-json", "-p", "Find the loop.")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	found := false
	var text strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct{ Type, ID, Status, Output, Text string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch {
		case ev.Type == "tool_result" && ev.ID == "a1":
			found = ev.Status == "ok" && ev.Output == "The loop lives in src/loop.go."
		case ev.Type == "text":
			text.WriteString(ev.Text)
		}
	}
	if !found || text.String() != "The explorer found it in src/loop.go." {
		t.Fatalf("subagent result missing (answer %q):\n%s", text.String(), r.stdout)
	}
}
