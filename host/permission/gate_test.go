package permission

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/hooks"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
)

// TestGate: deny stops the call before any hook; allow answers the call's
// approval; ask asks even an action approved for the session; a hook's
// "ask" does too; other calls go to the next decider.
func TestGate(t *testing.T) {
	work := t.TempDir()
	s := set(t, work, map[Effect][]string{Deny: {"Shell(rm *)"}, Ask: {"Shell(git push*)"}, Allow: {"Shell(git status*)"}})
	h, err := hooks.New(hooks.Config{WorkDir: work, Hooks: []hooks.Hook{
		{Event: hooks.PreToolUse, Command: `grep -q curl && echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}'; exit 0`}}})
	if err != nil {
		t.Fatal(err)
	}
	var events []loop.Event
	g := NewGate(s, h, loop.ObserverFunc(func(e loop.Event) { events = append(events, e) }))
	asked := 0
	session := approval.NewSession(func(context.Context, approval.Request) (approval.Answer, string, error) {
		asked++
		return approval.ApproveForSession, "", nil
	})
	d := g.Decider(session)
	spec := toolset.Spec{Name: "Shell", RuleArgument: "command"}
	call := func(id, cmd string) (*toolset.Result, approval.Decision) {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		c := toolset.Call{ID: id, Spec: spec, Args: args}
		r := g.Admit(context.Background(), c)
		if r != nil {
			return r, approval.Decision{}
		}
		dec, err := d.Decide(context.Background(), approval.Request{ToolCallID: id, ToolName: "Shell", Action: "run command"})
		if err != nil {
			t.Fatal(err)
		}
		g.Done(context.Background(), c, toolset.Result{})
		return nil, dec
	}
	if r, _ := call("1", "rm x"); r == nil || r.Brief != "Denied by rule Shell(rm *)" {
		t.Fatalf("deny: %+v", r)
	}
	if _, dec := call("2", "git status"); !dec.Approved || asked != 0 {
		t.Fatalf("allow: %+v, asked %d", dec, asked)
	}
	if _, dec := call("3", "make"); !dec.Approved || asked != 1 { // approved for the session
		t.Fatalf("plain: %+v, asked %d", dec, asked)
	}
	if _, dec := call("4", "make"); !dec.Approved || asked != 1 {
		t.Fatalf("session: %+v, asked %d", dec, asked)
	}
	if _, dec := call("5", "git push"); !dec.Approved || asked != 2 {
		t.Fatalf("ask rule: %+v, asked %d", dec, asked)
	}
	if _, dec := call("6", "curl x"); !dec.Approved || asked != 3 {
		t.Fatalf("ask hook: %+v, asked %d", dec, asked)
	}
	var decided []string
	for _, e := range events {
		if p, ok := e.(loop.PermissionDecided); ok {
			decided = append(decided, p.ToolCallID+":"+p.Decision)
		}
	}
	if len(decided) != 3 || decided[0] != "1:deny" || decided[1] != "2:allow" || decided[2] != "5:ask" {
		t.Fatalf("permission events %v", decided)
	}
}
