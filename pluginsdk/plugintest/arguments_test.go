package plugintest_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

type copyParams struct {
	Path string `json:"path" jsonschema:"The file to copy."`
	Mode string `json:"mode,omitempty" default:"keep" enum:"keep,overwrite"`
}

// copyTool counts the calls that reach it.
func copyTool(reached *atomic.Int32) pluginsdk.Definition {
	return pluginsdk.NewTool[copyParams]("Copy", "Copy a file.", func() (pluginsdk.HandlerFunc[copyParams], error) {
		return func(_ context.Context, p copyParams) pluginsdk.Result {
			reached.Add(1)
			return pluginsdk.Ok(p.Path + " " + p.Mode)
		}, nil
	})
}

// TestArgumentsCheckedAsByTheHost: arguments kosong-host would refuse never
// reach the handler under plugintest either, and the result is the host's,
// text for text (host/toolset's TestPlugintestAnswersAsTheHost runs the
// same inputs through the host's toolset); defaults are filled in before
// the call.
func TestArgumentsCheckedAsByTheHost(t *testing.T) {
	var reached atomic.Int32
	h := plugintest.New(t, plugintest.Options{}, copyTool(&reached))
	tests := []struct {
		name, args string
		kind       pluginsdk.ResultKind
		text, msg  string
	}{
		{"missing required argument", `{}`, pluginsdk.KindError, "",
			`Error validating JSON arguments: missing parameter "path"`},
		{"unknown argument", `{"path":"a","cwd":"/"}`, pluginsdk.KindError, "",
			`Error validating JSON arguments: unknown parameter "cwd"`},
		{"wrong type", `{"path":1}`, pluginsdk.KindError, "",
			`Error validating JSON arguments: parameter "path": type: 1 has type "integer", want "string"`},
		{"not in the enum", `{"path":"a","mode":"append"}`, pluginsdk.KindError, "",
			`Error validating JSON arguments: parameter "mode": enum: append does not equal any of: [keep overwrite]`},
		{"not JSON", `{"path":`, pluginsdk.KindError, "", "Error parsing JSON arguments: unexpected EOF"},
		{"default filled in", `{"path":"a"}`, pluginsdk.KindOk, "a keep", ""},
		{"given value kept", `{"path":"a","mode":"overwrite"}`, pluginsdk.KindOk, "a overwrite", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := reached.Load()
			got := h.MustCall(t, "Copy", tt.args)
			if got.Kind != tt.kind || got.Text() != tt.text || got.Message != tt.msg {
				t.Fatalf("got %+v, want kind %v text %q message %q", got, tt.kind, tt.text, tt.msg)
			}
			refused := tt.kind == pluginsdk.KindError
			if refused && got.Brief != "Invalid arguments" {
				t.Errorf("brief %q, want the host's %q", got.Brief, "Invalid arguments")
			}
			if calls := reached.Load() - before; refused != (calls == 0) {
				t.Errorf("the handler ran %d times for %s", calls, tt.args)
			}
		})
	}
}
