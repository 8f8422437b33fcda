package toolset_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
	"github.com/kosong-host/kosong-host/providers"
)

type copyParams struct {
	Path string `json:"path" jsonschema:"The file to copy."`
	Mode string `json:"mode,omitempty" default:"keep" enum:"keep,overwrite"`
}

var copyDef = pluginsdk.NewTool[copyParams]("Copy", "Copy a file.", func() (pluginsdk.HandlerFunc[copyParams], error) {
	return func(_ context.Context, p copyParams) pluginsdk.Result { return pluginsdk.Ok(p.Path + " " + p.Mode) }, nil
})

// harnessTool is the plugin behind plugintest's harness as a toolset tool
// with the schema the plugin describes: the toolset checks the arguments
// as for any plugin, then the harness runs the call.
type harnessTool struct {
	h    *plugintest.Harness
	spec toolset.Spec
}

func (t harnessTool) Spec() toolset.Spec { return t.spec }
func (t harnessTool) Call(ctx context.Context, _ string, args json.RawMessage) toolset.Result {
	r, err := t.h.Call(ctx, t.spec.Name, string(args))
	if err != nil {
		return toolset.RuntimeError(err)
	}
	kind := map[pluginsdk.ResultKind]toolset.Kind{pluginsdk.KindOk: toolset.Ok, pluginsdk.KindError: toolset.Failed, pluginsdk.KindRejected: toolset.Rejected}[r.Kind]
	return toolset.Result{Kind: kind, Message: r.Message, Brief: r.Brief, Output: []providers.ContentPart{providers.TextPart(r.Text())}}
}

// TestPlugintestAnswersAsTheHost: the inputs of plugintest's
// TestArgumentsCheckedAsByTheHost get the same answer, text for text, from
// the host's toolset as from plugintest alone.
func TestPlugintestAnswersAsTheHost(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, copyDef)
	specs := h.Describe(t)
	ts := toolset.New(nil)
	if err := ts.Add(harnessTool{h: h, spec: toolset.Spec{Name: specs[0].Name, Parameters: specs[0].Schema}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, args, message string }{
		{"missing required argument", `{}`, `Error validating JSON arguments: missing parameter "path"`},
		{"unknown argument", `{"path":"a","cwd":"/"}`, `Error validating JSON arguments: unknown parameter "cwd"`},
		{"wrong type", `{"path":1}`, `Error validating JSON arguments: parameter "path": type: 1 has type "integer", want "string"`},
		{"not JSON", `{"path":`, "Error parsing JSON arguments: unexpected EOF"},
		{"default filled in", `{"path":"a"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := ts.Handle(context.Background(), providers.ToolCall{ID: "c1", Name: "Copy", Arguments: tt.args}).Result()
			alone := h.MustCall(t, "Copy", tt.args)
			if host.Message != tt.message || alone.Message != tt.message {
				t.Fatalf("host says %q, plugintest %q, want %q", host.Message, alone.Message, tt.message)
			}
			if host.IsError() != (alone.Kind == pluginsdk.KindError) || host.Brief != alone.Brief || host.OutputText() != alone.Text() {
				t.Fatalf("host %+v, plugintest %+v", host, alone)
			}
		})
	}
}
