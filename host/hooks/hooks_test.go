package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func newRunner(t *testing.T, hs ...Hook) (*Runner, *[]Run) {
	t.Helper()
	var mu sync.Mutex
	runs := &[]Run{}
	env := map[string]string{"PATH": os.Getenv("PATH"), "OPENAI_API_KEY": "secret"}
	r, err := New(Config{Hooks: hs, WorkDir: t.TempDir(), SessionID: "s1",
		Getenv: func(k string) string { return env[k] },
		OnRun:  func(run Run) { mu.Lock(); defer mu.Unlock(); *runs = append(*runs, run) }})
	if err != nil {
		t.Fatal(err)
	}
	return r, runs
}

func TestFire(t *testing.T) {
	for _, tc := range []struct {
		name    string
		hook    Hook
		target  string
		action  Action
		reason  string
		warning string // a substring; "" for none
	}{
		{"exit 0 allows", Hook{Event: PreToolUse, Command: "exit 0"}, "Shell", ActionAllow, "", ""},
		{"exit 2 blocks with stderr", Hook{Event: PreToolUse, Command: "echo '  no rm  ' >&2; exit 2"}, "Shell", ActionBlock, "no rm", ""},
		{"exit 2 without stderr", Hook{Event: PreToolUse, Command: "exit 2"}, "Shell", ActionBlock, DefaultBlockReason, ""},
		{"JSON deny", Hook{Event: PreToolUse, Command: `echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"nope"}}'`}, "Shell", ActionBlock, "nope", ""},
		{"JSON ask", Hook{Event: PreToolUse, Command: `echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'`}, "Shell", ActionAsk, "", ""},
		{"JSON allow does nothing", Hook{Event: PreToolUse, Command: `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`}, "Shell", ActionAllow, "", ""},
		{"matcher misses", Hook{Event: PreToolUse, Command: "exit 2", Matcher: "^Write"}, "Shell", ActionAllow, "", ""},
		{"matcher hits", Hook{Event: PreToolUse, Command: "exit 2", Matcher: "^Sh"}, "Shell", ActionBlock, DefaultBlockReason, ""},
		{"other exit fails open", Hook{Event: PreToolUse, Command: "echo broken >&2; exit 1"}, "Shell", ActionAllow, "", "exit 1: broken"},
		{"missing command fails open", Hook{Event: PreToolUse, Command: "no-such-hook-command-xyz"}, "Shell", ActionAllow, "", "exit 127"},
		{"invalid JSON fails open", Hook{Event: PreToolUse, Command: `echo '{"hookSpecificOutput": '`}, "Shell", ActionAllow, "", "not a JSON object"},
		{"hang past timeout fails open", Hook{Event: PreToolUse, Command: "sleep 30", Timeout: time.Second}, "Shell", ActionAllow, "", "timed out after 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, runs := newRunner(t, tc.hook)
			start := time.Now()
			o := r.Fire(context.Background(), tc.hook.Event, tc.target, map[string]any{"tool_name": tc.target})
			if o.Action != tc.action || o.Reason != tc.reason {
				t.Fatalf("outcome %+v, want %s %q", o, tc.action, tc.reason)
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("took %s", time.Since(start))
			}
			var warning string
			for _, run := range *runs {
				warning += run.Warning
			}
			if (tc.warning == "") != (warning == "") || !strings.Contains(warning, tc.warning) {
				t.Fatalf("warning %q, want %q", warning, tc.warning)
			}
		})
	}
}

// TestStdinAndEnv: the hook gets the event as JSON on stdin, runs in the
// work dir with the minimal environment plus the event's variables, and
// never sees provider keys.
func TestStdinAndEnv(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	r, _ := newRunner(t, Hook{Event: PreToolUse, Command: "cat > " + out + "; echo >> " + out + "; pwd >> " + out + "; env >> " + out})
	r.Fire(context.Background(), PreToolUse, "Shell", map[string]any{"tool_name": "Shell", "tool_input": map[string]any{"command": "ls"}})
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(data), "\n", 2)
	var ev map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil {
		t.Fatalf("stdin %q: %v", lines[0], err)
	}
	if ev["hook_event_name"] != PreToolUse || ev["session_id"] != "s1" || ev["tool_name"] != "Shell" || ev["cwd"] != r.cfg.WorkDir {
		t.Fatalf("stdin %v", ev)
	}
	rest := lines[1]
	for _, want := range []string{r.cfg.WorkDir + "\n", "KOSONG_HOOK_EVENT=PreToolUse", "KOSONG_TOOL_NAME=Shell", "KOSONG_SESSION_ID=s1"} {
		if !strings.Contains(rest, want) {
			t.Errorf("output lacks %q:\n%s", want, rest)
		}
	}
	if strings.Contains(rest, "secret") {
		t.Errorf("the hook saw a provider key:\n%s", rest)
	}
}

// TestFirstBlockWins: hooks run in parallel, the same command once, and the
// first block in configuration order decides.
func TestFirstBlockWins(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	r, runs := newRunner(t,
		Hook{Event: Stop, Command: "echo x >> " + count},
		Hook{Event: Stop, Command: "echo x >> " + count},
		Hook{Event: Stop, Command: "echo first >&2; exit 2"},
		Hook{Event: Stop, Command: "echo second >&2; exit 2"},
	)
	o := r.Fire(context.Background(), Stop, "", nil)
	if o.Action != ActionBlock || o.Reason != "first" {
		t.Fatalf("outcome %+v", o)
	}
	data, _ := os.ReadFile(count)
	if string(data) != "x\n" || len(*runs) != 3 {
		t.Fatalf("count %q, %d runs", data, len(*runs))
	}
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct {
		hook Hook
		want string
	}{
		{Hook{Event: "PreTool", Command: "x"}, `unknown event "PreTool"`},
		{Hook{Event: Stop}, "command is required"},
		{Hook{Event: Stop, Command: "x", Matcher: "("}, `matcher "("`},
		{Hook{Event: Stop, Command: "x", Timeout: 601 * time.Second}, "out of range"},
	} {
		_, err := New(Config{Hooks: []Hook{tc.hook}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.hook, err, tc.want)
		}
	}
}

// TestClientHookHandler: a hook answered by a handler blocks with its
// reason (or the default PreToolUse reason) and fails open on an error or
// a timeout.
func TestClientHookHandler(t *testing.T) {
	tests := []struct {
		name    string
		handler Handler
		action  Action
		reason  string
		warning string
	}{
		{"block", func(context.Context, string, []byte) (Action, string, error) { return ActionBlock, "no", nil }, ActionBlock, "no", ""},
		{"block without reason", func(context.Context, string, []byte) (Action, string, error) { return ActionBlock, "", nil },
			ActionBlock, DefaultBlockReason, ""},
		{"allow", func(context.Context, string, []byte) (Action, string, error) { return ActionAllow, "", nil }, ActionAllow, "", ""},
		{"error", func(context.Context, string, []byte) (Action, string, error) {
			return ActionBlock, "x", errors.New("client gone")
		}, ActionAllow, "", "failed (client gone): allowed"},
		{"timeout", func(ctx context.Context, _ string, _ []byte) (Action, string, error) {
			<-ctx.Done()
			return ActionAllow, "", ctx.Err()
		}, ActionAllow, "", "timed out after 1s: allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs []Run
			var input []byte
			h := tt.handler
			r, err := New(Config{Hooks: []Hook{{Event: PreToolUse, Command: "wire:h1", Timeout: time.Second,
				Handler: func(ctx context.Context, target string, in []byte) (Action, string, error) {
					input = in
					return h(ctx, target, in)
				}}},
				WorkDir: t.TempDir(), SessionID: "s1", OnRun: func(r Run) { runs = append(runs, r) }})
			if err != nil {
				t.Fatal(err)
			}
			out := r.Fire(context.Background(), PreToolUse, "Shell", map[string]any{"tool_name": "Shell"})
			if out.Action != tt.action || out.Reason != tt.reason {
				t.Errorf("outcome %+v, want %s %q", out, tt.action, tt.reason)
			}
			if len(runs) != 1 || !strings.Contains(runs[0].Warning, tt.warning) || (tt.warning == "") != (runs[0].Warning == "") {
				t.Errorf("runs %+v, want warning %q", runs, tt.warning)
			}
			if !strings.Contains(string(input), `"tool_name":"Shell"`) || !strings.Contains(string(input), `"session_id":"s1"`) {
				t.Errorf("input %s", input)
			}
		})
	}
}
