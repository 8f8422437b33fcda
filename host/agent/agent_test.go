package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/agent"
	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/pins"
	"github.com/kosong-host/kosong-host/host/testbin"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// build builds the main package at pkg, named after its folder without
// the kosong-plugin- prefix (plugins/echo/cmd/kosong-plugin-echo: echo).
func build(t *testing.T, pkg string) string {
	t.Helper()
	p, err := testbin.Build(pkg, strings.TrimPrefix(filepath.Base(pkg), "kosong-plugin-"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeAgent writes an agent spec whose tools are the given reference lines.
func writeAgent(t *testing.T, tools ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "system.md"), []byte("You are a test."), 0o644); err != nil {
		t.Fatal(err)
	}
	body := "version: 1\nagent:\n  name: test\n  system_prompt_path: ./system.md\n  tools:\n"
	for _, tl := range tools {
		body += "    - " + tl + "\n"
	}
	path := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func options(t *testing.T, decider approval.Decider) agent.Options {
	return agent.Options{
		WorkDir: t.TempDir(), SessionID: "s1", StateDir: t.TempDir(), Decider: decider,
		StartTimeout: 30 * time.Second,
		Getenv: func(k string) string {
			return map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"),
				"KOSONG_TEST_SECRET": "sk-do-not-leak", "KOSONG_TEST_ALLOWED": "yes"}[k]
		},
	}
}

func load(t *testing.T, path string, opts agent.Options) *agent.Agent {
	t.Helper()
	a, err := agent.Load(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func call(t *testing.T, a *agent.Agent, name, args string) toolset.Result {
	t.Helper()
	return a.Toolset.Handle(context.Background(), providers.ToolCall{ID: "call_" + name, Name: name, Arguments: args}).Result()
}

func TestCapabilitiesOverTheBroker(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	var asked atomic.Value
	decider := approval.DeciderFunc(func(_ context.Context, r approval.Request) (approval.Decision, error) {
		asked.Store(r)
		return approval.Decision{Approved: true}, nil
	})
	path := writeAgent(t, fmt.Sprintf(`{plugin: %q, tools: [Whoami], config: {region: eu}, env: [KOSONG_TEST_ALLOWED]}`, cc))
	opts := options(t, decider)
	a := load(t, path, opts)

	r := call(t, a, "Whoami", `{"ask": true}`)
	if r.IsError() {
		t.Fatalf("Whoami failed: %+v", r)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(r.OutputText()), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"work_dir": opts.WorkDir, "session_id": "s1", "state_dir": filepath.Join(opts.StateDir, "plugins", "capcheck"),
		"config": map[string]any{"region": "eu"}, "env_secret": "", "env_allowed": "yes", "call_id": "call_Whoami",
	}
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	req, _ := asked.Load().(approval.Request)
	if req.Action != "inspect" || req.ToolCallID != "call_Whoami" || req.ToolName != "Whoami" {
		t.Fatalf("approval request = %+v", req)
	}
}

func TestLoadStatuses(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	a := load(t, writeAgent(t, fmt.Sprintf("%q", cc+":Whoami"), fmt.Sprintf("%q", cc+":Skipped"), fmt.Sprintf("%q", echo)), options(t, approval.Yolo{}))
	var rows []string
	for _, st := range a.Status {
		rows = append(rows, st.Name+"="+st.Status+":"+st.Reason)
	}
	got := strings.Join(rows, ", ")
	want := "Whoami=loaded:, Skipped=skipped:nothing to do here, Echo=loaded:"
	if got != want {
		t.Fatalf("statuses = %s, want %s", got, want)
	}
	if names := a.Toolset.Names(); strings.Join(names, ",") != "Whoami,Echo" {
		t.Fatalf("toolset = %v", names)
	}
}

func TestCalls(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	a := load(t, writeAgent(t, fmt.Sprintf("%q", echo), fmt.Sprintf("%q", cc+":Panic"), fmt.Sprintf("%q", cc+":Whoami")), options(t, approval.Deny{}))
	tests := []struct {
		name, tool, args string
		kind             toolset.Kind
		message          string
		output           string
	}{
		{"ok", "Echo", `{"text":"hi"}`, toolset.Ok, "", "hi"},
		{"empty arguments mean {}", "Whoami", ``, toolset.Ok, "", ""},
		{"invalid JSON", "Echo", `{bad`, toolset.Failed, "Error parsing JSON arguments: invalid character 'b' looking for beginning of object key string", ""},
		{"schema violation names the field", "Echo", `{"text": 3}`, toolset.Failed, `Error validating JSON arguments: parameter "text": type: 3 has type "integer", want "string"`, ""},
		{"missing required field", "Echo", `{}`, toolset.Failed, `Error validating JSON arguments: missing parameter "text"`, ""},
		{"unknown tool", "Nope", `{}`, toolset.Failed, "Tool `Nope` not found", ""},
		{"panic in the plugin", "Panic", `{}`, toolset.Failed, "Error running tool: tool Panic panicked: tool exploded", ""},
		{"rejected", "Whoami", `{"ask":true}`, toolset.Rejected, "The tool call is rejected by the user. Stop what you are doing and wait for the user to tell you how to proceed.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, a, tt.tool, tt.args)
			if r.Kind != tt.kind || r.Message != tt.message || (tt.output != "" && r.OutputText() != tt.output) {
				t.Fatalf("got kind %v message %q output %q", r.Kind, r.Message, r.OutputText())
			}
		})
	}
	// The plugin keeps serving after a panic.
	if r := call(t, a, "Echo", `{"text":"still here"}`); r.OutputText() != "still here" {
		t.Fatalf("after panic: %+v", r)
	}
}

func TestLoadErrors(t *testing.T) {
	cc := build(t, "host/testdata/plugins/capcheck")
	echo := build(t, "plugins/echo/cmd/kosong-plugin-echo")
	badproto := build(t, "host/testdata/plugins/badproto")
	noisy := build(t, "host/testdata/plugins/noisy")
	hang := build(t, "host/testdata/plugins/hang")
	notExec := filepath.Join(t.TempDir(), "kosong-plugin-text")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := pins.FileSHA256(echo)
	if err != nil {
		t.Fatal(err)
	}
	wrongSum := strings.Repeat("0", 64)
	tests := []struct {
		name  string
		tools []string
		opts  func(*agent.Options)
		want  []string
	}{
		{"missing binary", []string{`"./nowhere/kosong-plugin-x"`}, nil, []string{"binary not found", "nowhere/kosong-plugin-x"}},
		{"not executable", []string{fmt.Sprintf("%q", notExec)}, nil, []string{"is not executable"}},
		{"not a plugin", []string{`"/bin/true"`}, nil, []string{"plugin true:", "is not a kosong plugin: it exited before the plugin handshake"}},
		{"stdout before Serve", []string{fmt.Sprintf("%q", noisy)}, nil, []string{"is not a kosong plugin: it printed \"hello from a plugin that talks too much\" instead of the plugin handshake"}},
		{"protocol version mismatch", []string{fmt.Sprintf("%q", badproto)}, nil, []string{"protocol version mismatch"}},
		{"start timeout", []string{fmt.Sprintf("%q", hang)}, func(o *agent.Options) { o.StartTimeout = time.Second },
			[]string{"plugin hang did not start within 1s"}},
		{"start timeouts in one part, other failures in another", []string{`"/bin/true"`, fmt.Sprintf("%q", hang), fmt.Sprintf("%q", filepath.Join(filepath.Dir(hang), "hang2"))},
			func(o *agent.Options) {
				o.StartTimeout = time.Second
				copyFile(t, hang, filepath.Join(filepath.Dir(hang), "hang2"))
			},
			[]string{"Invalid tools: [plugin true: ", "]; 2 plugins did not start within 1s (hang, hang2)"}},
		{"sha256 mismatch", []string{fmt.Sprintf("{plugin: %q, sha256: %s}", echo, wrongSum)}, nil, []string{"sha256 mismatch", sum}},
		{"tool the plugin does not offer", []string{fmt.Sprintf("%q", echo+":Nope")}, nil, []string{"plugin echo has no tool Nope; it offers Echo"}},
		{"constructor error", []string{fmt.Sprintf("%q", cc+":Broken")}, nil, []string{"capcheck:Broken (database is unreachable)"}},
		{"duplicate tool name", []string{fmt.Sprintf("%q", echo), fmt.Sprintf("%q", filepath.Join(filepath.Dir(echo), "echo2")+":Echo")},
			func(*agent.Options) { copyFile(t, echo, filepath.Join(filepath.Dir(echo), "echo2")) },
			[]string{"duplicate tool name Echo: provided by plugin echo", "and by plugin echo2"}},
		{"bare name not found", []string{"ghost"}, func(o *agent.Options) { o.PluginDirs = []string{"/nonexistent"} },
			[]string{"plugin ghost: kosong-plugin-ghost not found in /nonexistent"}},
		{"failures reported together", []string{`"/bin/true"`, fmt.Sprintf("%q", cc+":Broken")}, nil,
			[]string{"Invalid tools: [", "plugin true:", "; capcheck:Broken"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := options(t, approval.Yolo{})
			if tt.opts != nil {
				tt.opts(&opts)
			}
			_, err := agent.Load(context.Background(), writeAgent(t, tt.tools...), opts)
			if err == nil {
				t.Fatal("load succeeded")
			}
			var le *agent.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("err %T %v is not a LoadError", err, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("message has several lines: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
