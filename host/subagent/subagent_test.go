package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/spec"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

func TestTool(t *testing.T) {
	subs := map[string]spec.Subagent{
		"explore": {Path: "/a/explore.yaml", Description: "Reads code."},
		"coder":   {Path: "/a/coder.yaml", Description: "Writes code."},
	}
	var gotName, gotTask string
	run := func(_ context.Context, name, task string) (string, error) {
		gotName, gotTask = name, task
		switch task {
		case "fail":
			return "partial", errors.New("Max number of steps reached: 3")
		case "silent":
			return "", nil
		}
		return "found it in a.go:12", nil
	}
	ts := toolset.New(nil)
	if err := ts.Add(Tool(subs, run)); err != nil {
		t.Fatal(err)
	}
	def := ts.Tools()[0]
	if def.Name != "Agent" || !strings.Contains(def.Description, "- coder: Writes code.\n- explore: Reads code.") {
		t.Fatalf("tool %s: %s", def.Name, def.Description)
	}
	var schema struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(def.Parameters, &schema); err != nil || strings.Join(schema.Properties["subagent"].Enum, ",") != "coder,explore" {
		t.Fatalf("schema %s", def.Parameters)
	}
	tests := []struct {
		name, args string
		kind       toolset.Kind
		output     string
		message    string
	}{
		{"answer", `{"subagent":"explore","prompt":"where is x?"}`, toolset.Ok, "found it in a.go:12", ""},
		{"failure keeps the partial answer", `{"subagent":"coder","prompt":"fail"}`, toolset.Failed, "partial",
			"Subagent coder failed: Max number of steps reached: 3"},
		{"no answer", `{"subagent":"coder","prompt":"silent"}`, toolset.Ok, "", "Subagent coder finished without an answer."},
		{"unknown subagent", `{"subagent":"ghost","prompt":"x"}`, toolset.Failed, "",
			`Error validating JSON arguments: parameter "subagent": enum: ghost does not equal any of: [coder explore]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.Handle(context.Background(), providers.ToolCall{ID: "c1", Name: "Agent", Arguments: tt.args}).Result()
			if r.Kind != tt.kind || r.OutputText() != tt.output || r.Message != tt.message {
				t.Fatalf("got %+v", r)
			}
		})
	}
	if gotName != "coder" || gotTask != "silent" {
		t.Fatalf("runner saw %q %q", gotName, gotTask)
	}
}
