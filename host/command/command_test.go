package command

import (
	"context"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers/scripted"
)

func TestParse(t *testing.T) {
	tests := []struct {
		line, name, arg string
		ok              bool
	}{
		{"/compact keep the plan ", "/compact", "keep the plan", true},
		{"  /plan", "/plan", "", true},
		{"/etc/hosts is wrong", "", "", false},
		{"/", "", "", false},
		{"hello /compact", "", "", false},
		{"/compact\nmore", "", "", false},
	}
	for _, tt := range tests {
		name, arg, ok := Parse(tt.line)
		if name != tt.name || arg != tt.arg || ok != tt.ok {
			t.Errorf("Parse(%q) = %q, %q, %v; want %q, %q, %v", tt.line, name, arg, ok, tt.name, tt.arg, tt.ok)
		}
	}
}

func TestRunOnConversation(t *testing.T) {
	ts := toolset.New(nil)
	l, err := loop.New(loop.Config{Provider: scripted.New(nil), Toolset: ts})
	if err != nil {
		t.Fatal(err)
	}
	conv := conversation.New(conversation.Parts{Loop: l, Toolset: ts})
	var said []string
	var turns []string
	env := Env{Conv: conv, Say: func(s string) { said = append(said, s) },
		Turn: func(_ context.Context, p string) error { turns = append(turns, p); return nil }}
	tests := []struct {
		line, want string
		plan       bool
	}{
		{"/compact", "nothing to compact", false},
		{"/plan", "Plan mode on", true},
		{"/plan on", "Plan mode on", true},
		{"/plan off", "Plan mode off", false},
		{"/plan maybe", `error: /plan takes on or off, not "maybe"`, false},
		{"/rewind x", `error: /rewind N takes a number of turns`, false},
		{"/undo now", "/undo takes no argument", false},
		{"/export", "nothing to export yet", false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			said = nil
			name, arg, _ := Parse(tt.line)
			c, ok := Find(t.TempDir(), name)
			if !ok {
				t.Fatalf("no command %s", name)
			}
			c.Run(context.Background(), env, arg)
			if len(said) != 1 || !strings.Contains(strings.ToLower(said[0]), strings.ToLower(tt.want)) {
				t.Fatalf("said %q, want %q", said, tt.want)
			}
			if conv.PlanMode() != tt.plan {
				t.Fatalf("plan mode %v, want %v", conv.PlanMode(), tt.plan)
			}
		})
	}
	c, _ := Find("", "/init")
	c.Run(context.Background(), env, "short")
	if len(turns) != 1 || !strings.HasPrefix(turns[0], InitPrompt) || !strings.HasSuffix(turns[0], "The user adds: short") {
		t.Fatalf("/init sent %q", turns)
	}
	if _, ok := Find("", "/nosuch"); ok {
		t.Fatal("Find found /nosuch")
	}
}
