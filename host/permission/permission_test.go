package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func set(t *testing.T, work string, rules map[Effect][]string) *Set {
	t.Helper()
	s := &Set{WorkDir: work, Home: "/home/u"}
	for _, effect := range []Effect{Deny, Ask, Allow} {
		for _, text := range rules[effect] {
			r, err := ParseRule(text, effect)
			if err != nil {
				t.Fatal(err)
			}
			r.File = filepath.Join(work, "agent.yaml")
			s.Add(r)
		}
	}
	return s
}

var (
	shell = Tool{Name: "Shell", RuleArgument: "command"}
	read  = Tool{Name: "ReadFile", RuleArgument: "path"}
	write = Tool{Name: "WriteFile", RuleArgument: "path"}
	fetch = Tool{Name: "FetchURL", RuleArgument: "url"}
	glob  = Tool{Name: "Glob", RuleArgument: "pattern"}
	think = Tool{Name: "Think"}
	gh    = Tool{Name: "github__create_issue", MCP: true}
)

func TestDecide(t *testing.T) {
	work := t.TempDir()
	rules := map[Effect][]string{
		Deny:  {"Shell(rm -rf *)", "ReadFile(./secrets/**)", "FetchURL(domain:evil.example)", "WriteFile(.env)"},
		Ask:   {"Shell(git push*)", "mcp:github__*"},
		Allow: {"Shell(git status*)", "Shell(ls *)", "Shell(npm run test:*)", "WriteFile(src/**)", "FetchURL(https://docs.example.com/*)", "Glob(*.go)", "Think"},
	}
	s := set(t, work, rules)
	for _, tc := range []struct {
		tool Tool
		args string
		want Effect
		rule string
	}{
		{shell, `{"command":"git status"}`, Allow, "Shell(git status*)"},
		{shell, `{"command":"git status --short"}`, Allow, "Shell(git status*)"},
		{shell, `{"command":"git status && git diff"}`, None, ""},               // allow needs every part
		{shell, `{"command":"echo a; rm -rf /tmp/x"}`, Deny, "Shell(rm -rf *)"}, // deny needs one part
		{shell, `{"command":"echo $(rm -rf /)"}`, Deny, "Shell(rm -rf *)"},
		{shell, `{"command":"echo 'a; rm -rf b'"}`, None, ""}, // quoted: one part
		{shell, `{"command":"ls"}`, Allow, "Shell(ls *)"},
		{shell, `{"command":"ls -la"}`, Allow, "Shell(ls *)"},
		{shell, `{"command":"lsof"}`, None, ""},
		{shell, `{"command":"npm run test:unit"}`, None, ""},
		{shell, `{"command":"npm run test --watch"}`, Allow, "Shell(npm run test:*)"},
		{shell, `{"command":"git push origin"}`, Ask, "Shell(git push*)"},
		{read, `{"path":"secrets/key.pem"}`, Deny, "ReadFile(./secrets/**)"},
		{read, `{"path":"` + filepath.Join(work, "secrets", "a", "b") + `"}`, Deny, "ReadFile(./secrets/**)"},
		{read, `{"path":"sub/secrets/key.pem"}`, None, ""}, // ./ anchors at the work dir
		{write, `{"path":"src/a/b.go"}`, Allow, "WriteFile(src/**)"},
		{write, `{"path":"lib/src/b.go"}`, None, ""},                  // allow: at the work dir only
		{write, `{"path":"deep/down/.env"}`, Deny, "WriteFile(.env)"}, // deny: any depth
		{write, `{"path":"../src/x"}`, None, ""},
		{fetch, `{"url":"https://docs.example.com/a/b"}`, Allow, "FetchURL(https://docs.example.com/*)"},
		{fetch, `{"url":"https://docs.example.com.evil/a"}`, None, ""},
		{fetch, `{"url":"http://EVIL.example/x"}`, Deny, "FetchURL(domain:evil.example)"},
		{glob, `{"pattern":"*.go"}`, Allow, "Glob(*.go)"},
		{glob, `{"pattern":"**/*.ts"}`, None, ""},
		{think, `{"thought":"x"}`, Allow, "Think"},
		{gh, `{}`, Ask, "mcp:github__*"},
		{Tool{Name: "github__x"}, `{}`, None, ""}, // not an MCP tool
	} {
		d := s.Decide(tc.tool, json.RawMessage(tc.args))
		if d.Effect != tc.want || d.Rule.Text != tc.rule {
			t.Errorf("%s %s: %s by %q (%s), want %s by %q", tc.tool.Name, tc.args, d.Effect, d.Rule.Text, d.Reason, tc.want, tc.rule)
		}
	}
}

// TestSymlink: a deny matches the link or its target; an allow needs both.
func TestSymlink(t *testing.T) {
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "secrets", "k"), []byte("x"), 0o600)
	if err := os.MkdirAll(filepath.Join(work, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(work, "secrets", "k"), filepath.Join(work, "src", "k")); err != nil {
		t.Skip(err)
	}
	s := set(t, work, map[Effect][]string{Deny: {"ReadFile(./secrets/**)"}, Allow: {"WriteFile(src/**)"}})
	if d := s.Decide(read, json.RawMessage(`{"path":"src/k"}`)); d.Effect != Deny {
		t.Errorf("read through the link: %s", d.Effect)
	}
	if d := s.Decide(write, json.RawMessage(`{"path":"src/k"}`)); d.Effect != None {
		t.Errorf("write through the link: %s", d.Effect)
	}
}

func TestParseRuleErrors(t *testing.T) {
	for _, tc := range []struct{ rule, want string }{
		{"Shell(git status", "no closing parenthesis"},
		{"Shell git)", "unbalanced parenthesis"},
		{"Shell()", "empty pattern"},
		{"(x)", "is not a tool name"},
		{"Read File", "is not a tool name"},
		{"ReadFile(src/[)", "malformed pattern"},
		{"WriteFile(src/{a,b)", "malformed pattern"},
		{"mcp:", "want mcp:TOOL_GLOB"},
	} {
		if _, err := ParseRule(tc.rule, Deny); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("%q: error %v, want %q", tc.rule, err, tc.want)
		}
	}
}

func TestBind(t *testing.T) {
	work := t.TempDir()
	tools := []Tool{shell, read, think}
	for _, tc := range []struct{ rule, want string }{
		{"Bash(rm *)", `agent.yaml: permissions.deny: rule "Bash(rm *)": unknown tool Bash (the agent's tools: Shell, ReadFile, Think)`},
		{"Think(x*)", "tool Think declares no argument for rules"},
		{"mcp:nothing__*", ""},
		{"Shell", ""},
	} {
		err := set(t, work, map[Effect][]string{Deny: {tc.rule}}).Bind(tools)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: error %v, want %q", tc.rule, err, tc.want)
		}
	}
}
