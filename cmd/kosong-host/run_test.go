package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/prompt"
	"github.com/kosong-host/kosong-host/host/session"
	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/providers"
	"github.com/kosong-host/kosong-host/providers/scripted"
)

func TestTurnExit(t *testing.T) {
	retryable := &providers.Error{Provider: "p", Kind: providers.ErrServer}
	tests := []struct {
		name       string
		res        loop.TurnResult
		err        error
		streamJSON bool
		refused    int
		code       int
		printed    bool // the error is printed by main (not only by the printer)
	}{
		{"done", loop.TurnResult{Reason: loop.StopDone}, nil, false, 0, 0, false},
		{"rejected", loop.TurnResult{Reason: loop.StopRejected}, nil, false, 1, exitRefused, false},
		{"done after a refused call", loop.TurnResult{Reason: loop.StopDone}, nil, false, 1, exitRefused, false},
		{"repeat guard", loop.TurnResult{Reason: loop.StopToolCallRepeat}, nil, false, 0, 1, false},
		{"max steps", loop.TurnResult{}, &loop.MaxStepsError{N: 3}, false, 0, 1, false},
		{"not retryable", loop.TurnResult{}, &providers.Error{Provider: "p", Kind: providers.ErrAuth}, false, 0, 1, false},
		{"retries exhausted", loop.TurnResult{}, &loop.RetriesExhaustedError{Attempts: 3, Err: retryable}, false, 0, exitProvider, false},
		{"retries exhausted, stream-json", loop.TurnResult{}, &loop.RetriesExhaustedError{Attempts: 3, Err: retryable}, true, 0, exitProvider, true},
		{"cancelled", loop.TurnResult{}, context.Canceled, false, 0, exitInterrupted, false},
		{"max turns", loop.TurnResult{Reason: loop.StopMaxTurns}, nil, false, 0, exitLimit, false},
		{"max budget after a refused call", loop.TurnResult{Reason: loop.StopMaxBudget}, nil, true, 1, exitLimit, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := turnExit(tt.res, tt.err, tt.refused, tt.streamJSON)
			if tt.code == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != tt.code || (ee.err != nil) != tt.printed {
				t.Fatalf("got %#v, want code %d printed %v", err, tt.code, tt.printed)
			}
		})
	}
}

func TestDecideMode(t *testing.T) {
	tests := []struct {
		name        string
		flags       runFlags
		args        []string
		stdin       string
		tty         bool
		wantOneShot bool
		wantInput   string
		wantErr     string
	}{
		{"-p with piped stdin", runFlags{prompt: "review"}, nil, "diff --git a b\n", false, true, "review\n\n<stdin>\ndiff --git a b\n</stdin>", ""},
		{"-p with empty stdin", runFlags{prompt: "hi"}, nil, "", false, true, "hi", ""},
		{"-p on a terminal", runFlags{prompt: "hi"}, nil, "", true, true, "hi", ""},
		{"the argument", runFlags{}, []string{"fix", "the test"}, "", true, true, "fix the test", ""},
		{"the argument and -p", runFlags{prompt: "a"}, []string{"b"}, "", true, false, "", "give the prompt once"},
		{"terminal", runFlags{}, nil, "", true, false, "", ""},
		{"--interactive on a pipe", runFlags{interactive: true}, nil, "a\nb\n", false, false, "", ""},
		{"prompt on stdin", runFlags{}, nil, "  what is this?\n", false, true, "what is this?", ""},
		{"empty stdin", runFlags{}, nil, " \n", false, false, "", "no prompt: give one with -p"},
		{"-p with --no-stdin", runFlags{prompt: "hi", noStdin: true}, nil, "ignored", false, true, "hi", ""},
		{"--no-stdin without a prompt", runFlags{noStdin: true}, nil, "ignored", false, false, "", "no prompt: give one with -p (--no-stdin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decideMode(&tt.flags, tt.args, strings.NewReader(tt.stdin), tt.tty, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil || m.oneShot != tt.wantOneShot || m.input != tt.wantInput {
				t.Fatalf("%+v %v", m, err)
			}
		})
	}
}

// runInProcess runs `kosong-host run ARGS` in dir with an agent that has
// no tools (so no plugin binary is needed) and returns the exit code,
// stdout and stderr.
func runInProcess(t *testing.T, files map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	files["agent.yaml"] = "version: 1\nagent:\n  name: bare\n  system_prompt_path: ./s.md\n  system_prompt_args: {WHO: tester}\n  tools: []\n"
	files["s.md"] = "You help ${WHO} in ${KOSONG_WORK_DIR}."
	return runRoot(t, files, stdin, append([]string{"--agent", "agent.yaml", "run"}, args...)...)
}

// runRoot runs `kosong-host ARGS` in a folder holding files.
func runRoot(t *testing.T, files map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return runRootIn(t, dir, stdin, args...)
}

// runRootIn runs `kosong-host ARGS` in dir.
func runRootIn(t *testing.T, dir, stdin string, args ...string) (int, string, string) {
	t.Helper()
	t.Chdir(dir)
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("KIMI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.Execute()
	code := 0
	if err != nil {
		code = 2
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		if ee == nil || ee.err != nil {
			errb.WriteString("error: " + err.Error() + "\n")
		}
	}
	return code, out.String(), errb.String()
}

func TestRunExitCodes(t *testing.T) {
	script := func(s string) map[string]string { return map[string]string{"script.yaml": s} }
	scriptArgs := []string{"--provider", "scripted", "--script", "script.yaml"}
	tests := []struct {
		name   string
		files  map[string]string
		stdin  string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"done", script("turns:\n  - text: Hello from the script.\n"), "", append(scriptArgs, "-p", "hi"),
			0, []string{"Hello from the script.\n"}, []string{"[1 step]"}},
		{"prompt on stdin", script("turns:\n  - text: Got it.\n"), "the question\n", scriptArgs,
			0, []string{"Got it."}, nil},
		{"turn fails", script("turns:\n  - error: auth\n"), "", append(scriptArgs, "-p", "hi"),
			1, nil, []string{"error: scripted: authentication error"}},
		{"provider keeps failing", script("turns:\n  - error: server\n  - error: server\n  - error: server\n"), "", append(scriptArgs, "-p", "hi"),
			exitProvider, nil, []string{"failed after 3 attempts"}},
		{"no provider", map[string]string{}, "", []string{"-p", "hi"},
			2, nil, []string{"KIMI_API_KEY", "OPENAI_API_KEY", "--provider scripted"}},
		{"unknown provider", map[string]string{}, "", []string{"--provider", "nope", "-p", "hi"},
			2, nil, []string{`unknown provider "nope"`}},
		{"bad output format", script("turns: []\n"), "", append(scriptArgs, "--output-format", "xml", "-p", "hi"),
			2, nil, []string{`invalid --output-format "xml"`}},
		{"bad max steps", script("turns: []\n"), "", append(scriptArgs, "--max-steps-per-turn", "0", "-p", "hi"),
			2, nil, []string{"--max-steps-per-turn 0"}},
		{"no prompt", script("turns: []\n"), "", scriptArgs,
			2, nil, []string{"no prompt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runInProcess(t, tt.files, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if n := strings.Count("\n"+stderr, "\nerror: "); n > 1 {
				t.Errorf("the error is printed %d times:\n%s", n, stderr)
			}
		})
	}
}

func TestRunStreamJSONAndSession(t *testing.T) {
	code, stdout, stderr := runInProcess(t, map[string]string{"script.yaml": "turns:\n  - text: Hi.\n"}, "",
		"--provider", "scripted", "--script", "script.yaml", "--output-format", "stream-json", "-p", "hello")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
	var types []string
	var stateDir string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var ev struct {
			Type     string `json:"type"`
			StateDir string `json:"state_dir"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		types = append(types, ev.Type)
		if ev.Type == "session" {
			stateDir = ev.StateDir
		}
	}
	if !slices.Equal(types, []string{"session", "step_start", "text", "stop", "turn_end", "result"}) {
		t.Fatalf("events %v", types)
	}
	// The history was saved after the turn, with the rendered system
	// prompt's conversation.
	h, err := session.LoadHistory(filepath.Join(stateDir, session.HistoryFile))
	if err != nil || len(h) != 2 || h[0].Text() != "hello" || h[1].Text() != "Hi." {
		t.Fatalf("history %+v %v", h, err)
	}
}

// TestDefaultAgents loads the agents of agents/default and renders their
// system prompts; the subagents lack the tools they must not have.
func TestDefaultAgents(t *testing.T) {
	dir := filepath.Join("..", "..", "agents", "default")
	tools := func(s *spec.Spec) []string {
		var names []string
		for _, r := range s.Tools {
			if r.Tools == nil {
				names = append(names, r.Plugin+":*-"+strings.Join(r.Exclude, ","))
				continue
			}
			for _, tool := range r.Tools {
				names = append(names, r.Plugin+":"+tool)
			}
		}
		return names
	}
	whole := func(exclude string) []string {
		return []string{"shell:*-" + exclude, "file:*-" + exclude, "web:*-" + exclude, "todo:SetTodoList", "think:Think",
			"ask:*-" + exclude, "media:*-" + exclude}
	}
	tests := []struct {
		file  string
		name  string
		tools []string
	}{
		{"agent.yaml", "kosong", []string{"shell:*-", "file:*-", "web:*-", "todo:SetTodoList", "think:Think", "ask:*-", "media:*-"}},
		// A bare tool name in exclude_tools is left out of every plugin
		// loaded whole (see host/spec): subagents neither ask the user nor
		// manage background tasks.
		{"coder.yaml", "coder", whole("AskUserQuestion,TaskList,TaskOutput,TaskStop")},
		{"explore.yaml", "explore", whole("WriteFile,StrReplaceFile,AskUserQuestion,TaskList,TaskOutput,TaskStop")},
		{"plan.yaml", "plan", whole("WriteFile,StrReplaceFile,Shell,AskUserQuestion,TaskList,TaskOutput,TaskStop")},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := spec.Load(filepath.Join(dir, tt.file), spec.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tt.name || !slices.Equal(tools(s), tt.tools) {
				t.Fatalf("name %q tools %v, want %q %v", s.Name, tools(s), tt.name, tt.tools)
			}
			if tt.file == "agent.yaml" && len(s.Subagents) != 3 {
				t.Fatalf("subagents %v", s.Subagents)
			}
			system, err := prompt.Render(s.SystemPromptPath, s.SystemPromptArgs, prompt.Options{WorkDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(system, "${") || !strings.Contains(system, "Working directory: /") {
				t.Fatalf("system prompt:\n%s", system)
			}
			if tt.file != "agent.yaml" && !strings.Contains(system, "subagent") {
				t.Fatalf("the %s role is missing:\n%s", tt.name, system)
			}
		})
	}
}

// TestDemoScript checks the shape `make demo` relies on: two parallel
// calls, then one, then the answer.
func TestDemoScript(t *testing.T) {
	p, err := scripted.Load(filepath.Join("..", "..", "agents", "demo", "script.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var shape []int
	var names []string
	for {
		st, err := p.Stream(context.Background(), providers.Request{})
		if err != nil {
			break
		}
		calls := 0
		for {
			ev, err := st.Next()
			if err != nil {
				break
			}
			if ev.Kind == providers.EventToolCall {
				calls++
				names = append(names, ev.ToolCall.Name)
			}
		}
		shape = append(shape, calls)
	}
	if !slices.Equal(shape, []int{2, 1, 0}) || !slices.Equal(names, []string{"Glob", "ReadFile", "Grep"}) {
		t.Fatalf("calls per turn %v, tools %v", shape, names)
	}
}
