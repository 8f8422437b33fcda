package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestACPQuestions: one single-select question of AskUserQuestion becomes a
// session/request_permission whose options are the question's; the chosen
// option's label is the tool's answer. Two questions do not fit and the
// call fails with Kimi's text for a client that cannot ask.
func TestACPQuestions(t *testing.T) {
	script := askScript + `  - tool_calls: [{id: c2, name: AskUserQuestion, arguments: {questions: [
      {question: "Which database?", header: DB, options: [{label: Postgres, description: a}, {label: SQLite, description: b}]},
      {question: "Which cache?", header: Cache, options: [{label: Redis, description: c}, {label: none, description: d}]}]}}]
  - text: "Asked in text instead."
`
	work := writeFiles(t, map[string]string{"agent.yaml": askAgent, "s.md": "hi", "script.yaml": script})
	c := startACP(t, work, emptyEnv(t), "--agent", filepath.Join(work, "agent.yaml"), "--provider", "scripted",
		"--script", filepath.Join(work, "script.yaml"))
	c.initialize()
	sess := c.newSession(work)
	var mu sync.Mutex
	var offered []string
	c.permit = func(p acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		mu.Lock()
		defer mu.Unlock()
		offered = append(offered, *p.ToolCall.Title)
		for _, o := range p.Options {
			offered = append(offered, fmt.Sprintf("%s=%s/%s", o.OptionId, o.Name, o.Kind))
		}
		return selected("answer-1")
	}
	if res, err := c.prompt(sess.SessionId, "Set up a database."); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	mu.Lock()
	got := strings.Join(offered, "; ")
	mu.Unlock()
	if got != "[Database] Which database?; answer-0=Postgres - relational/allow_once; answer-1=SQLite - embedded/allow_once; dismiss=Dismiss/reject_once" {
		t.Fatalf("permission request: %s", got)
	}
	lines := summary(c.takeUpdates())
	if !hasLine(lines, `tool_call_update c1 completed text("{\"answers\":{\"Which database?\":\"SQLite\"}}")`) {
		t.Fatalf("answered: updates %q", lines)
	}

	if res, err := c.prompt(sess.SessionId, "And a cache."); err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	lines = summary(c.takeUpdates())
	found := false
	for _, l := range lines {
		found = found || (strings.HasPrefix(l, "tool_call_update c2 failed") && strings.Contains(l, "does not support interactive questions"))
	}
	if !found {
		t.Fatalf("two questions: updates %q", lines)
	}
}
