package toolset

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
)

func TestModelName(t *testing.T) {
	long70 := strings.Repeat("a", 60) + "_tool_0123"
	tests := []struct {
		name, want string
	}{
		{"Shell", "Shell"},
		{"test__echo", "test__echo"},
		{"files-read_2", "files-read_2"},
		{"files.read", "files_read"},
		{"a b/c:d", "a_b_c_d"},
		{"café", "caf_"},
		{strings.Repeat("x", 64), strings.Repeat("x", 64)},
	}
	for _, tt := range tests {
		if got := ModelName(tt.name); got != tt.want {
			t.Errorf("ModelName(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	got := ModelName(long70)
	if len(got) != MaxNameLen || !ValidName(got) || !strings.HasPrefix(got, long70[:55]+"_") {
		t.Errorf("ModelName(70 chars) = %q (%d)", got, len(got))
	}
	// Long names sharing their first 64 characters stay apart.
	if other := ModelName(long70 + "x"); other == got {
		t.Errorf("two long names share %q", got)
	}
	if got != ModelName(long70) {
		t.Error("ModelName is not stable")
	}
}

func TestToolNamesForTheModel(t *testing.T) {
	long70 := "server__" + strings.Repeat("long", 15) + "_xy"
	named := func(name, source string) fakeTool {
		return fakeTool{spec: Spec{Name: name, Source: source, Parameters: json.RawMessage(`{"type":"object"}`)},
			call: func(context.Context, string, json.RawMessage) Result {
				return Result{Output: []providers.ContentPart{providers.TextPart(name)}}
			}}
	}
	ts := newSet(t, named("files.read", "mcp server fs"), named(long70, "mcp server long"), named("Shell", "plugin shell"))

	// The model is offered valid names only.
	var offered []string
	for _, d := range ts.Tools() {
		if !ValidName(d.Name) {
			t.Errorf("offered invalid name %q", d.Name)
		}
		offered = append(offered, d.Name)
	}
	if offered[0] != "files_read" || offered[2] != "Shell" || offered[1] != ModelName(long70) {
		t.Fatalf("offered %q", offered)
	}
	// Calls are routed back by the offered name, and by the tool's own.
	for _, name := range []string{"files_read", "files.read"} {
		r := ts.Handle(context.Background(), callOf("c1", name, `{}`)).Result()
		if r.IsError() || r.OutputText() != "files.read" {
			t.Errorf("call %s: %+v", name, r)
		}
	}
	if r := ts.Handle(context.Background(), callOf("c2", ModelName(long70), `{}`)).Result(); r.OutputText() != long70 {
		t.Errorf("long name call: %+v", r)
	}
	if got, ok := ts.ModelNameOf("files.read"); !ok || got != "files_read" {
		t.Errorf("ModelNameOf = %q, %v", got, ok)
	}
	if _, ok := ts.Find("files_read"); !ok {
		t.Error("Find by the offered name failed")
	}
	if names := ts.Names(); names[0] != "files.read" {
		t.Errorf("Names %q", names)
	}

	// A name that sanitizes to one already offered is a load error naming both.
	err := ts.Add(named("files_read", "plugin files"))
	if err == nil || !strings.Contains(err.Error(), "files.read (mcp server fs)") || !strings.Contains(err.Error(), "files_read (plugin files)") {
		t.Fatalf("clash: %v", err)
	}
	if err := ts.Add(named("files:read", "mcp server other")); err == nil || !strings.Contains(err.Error(), "files:read") {
		t.Fatalf("clash: %v", err)
	}
	// Replace frees the offered name.
	if errs := ts.Replace([]string{"files.read"}, named("files_read", "plugin files")); len(errs) > 0 {
		t.Fatal(errs)
	}
	if r := ts.Handle(context.Background(), callOf("c3", "files_read", `{}`)).Result(); r.OutputText() != "files_read" {
		t.Errorf("after Replace: %+v", r)
	}
	if err := ts.Add(named("", "plugin nameless")); err == nil || !strings.Contains(err.Error(), "plugin nameless") {
		t.Fatalf("nameless: %v", err)
	}
}

func callOf(id, name, args string) providers.ToolCall {
	return providers.ToolCall{ID: id, Name: name, Arguments: args}
}
