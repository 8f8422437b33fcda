package toolset

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kosong-host/kosong-host/providers"
)

// annotated is a tool declaring whether it only reads; it counts its runs.
type annotated struct {
	name     string
	readOnly *bool
	runs     atomic.Int32
}

func (a *annotated) Spec() Spec {
	return Spec{Name: a.name, Source: "test", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (a *annotated) Call(context.Context, string, json.RawMessage) Result {
	a.runs.Add(1)
	return Result{Brief: "ran"}
}

func (a *annotated) Annotations() Annotations { return Annotations{ReadOnly: a.readOnly} }

type planTool struct{ annotated }

func (*planTool) PlanModeTool() {}

func TestPlanModeOffersAndRunsReadOnlyToolsOnly(t *testing.T) {
	yes, no := true, false
	read := &annotated{name: "ReadFile", readOnly: &yes}
	write := &annotated{name: "WriteFile", readOnly: &no}
	unknown := &annotated{name: "Legacy"} // declares nothing: not read-only
	exit := &planTool{annotated{name: "ExitPlanMode"}}
	ts := New(nil)
	for _, tool := range []Tool{read, write, unknown, exit} {
		if err := ts.Add(tool); err != nil {
			t.Fatal(err)
		}
	}
	names := func() string {
		var out []string
		for _, d := range ts.Tools() {
			out = append(out, d.Name)
		}
		return strings.Join(out, " ")
	}
	if got := names(); got != "ReadFile WriteFile Legacy ExitPlanMode" {
		t.Fatalf("tools outside plan mode: %s", got)
	}
	if !ts.SetPlanMode(true) || ts.SetPlanMode(true) || !ts.PlanMode() {
		t.Fatal("SetPlanMode(true) did not report one change")
	}
	if got := names(); got != "ReadFile ExitPlanMode" {
		t.Fatalf("tools in plan mode: %s, want ReadFile ExitPlanMode", got)
	}
	tests := []struct {
		tool    *annotated
		refused bool
	}{
		{read, false},
		{write, true},
		{unknown, true},
		{&exit.annotated, false},
	}
	for _, tt := range tests {
		t.Run(tt.tool.name, func(t *testing.T) {
			before := tt.tool.runs.Load()
			r := ts.Handle(context.Background(), providers.ToolCall{ID: "c1", Name: tt.tool.name, Arguments: "{}"}).Result()
			ran := tt.tool.runs.Load() > before
			if tt.refused {
				want := tt.tool.name + " is not available in plan mode."
				if ran || r.Kind != Failed || !strings.HasPrefix(r.Message, want) {
					t.Fatalf("ran %v, result %+v; want refused with %q", ran, r, want)
				}
				return
			}
			if !ran || r.IsError() {
				t.Fatalf("ran %v, result %+v; want it run", ran, r)
			}
		})
	}
	if !ts.SetPlanMode(false) {
		t.Fatal("SetPlanMode(false) reported no change")
	}
	before := write.runs.Load()
	if r := ts.Handle(context.Background(), providers.ToolCall{ID: "c2", Name: "WriteFile", Arguments: "{}"}).Result(); r.IsError() || write.runs.Load() == before {
		t.Fatalf("WriteFile after plan mode: %+v", r)
	}
}
