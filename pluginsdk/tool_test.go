package pluginsdk

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/fstest"
)

type p struct {
	N int `json:"n"`
}

type h struct{}

func (h) Call(context.Context, p) Result { return Ok("") }

func TestDeclarationErrors(t *testing.T) {
	tests := []struct {
		name string
		def  Definition
		want string
	}{
		{"not a function", NewTool[p]("A", "d", 42), "tool A: constructor must be a function, got int"},
		{"variadic", NewTool[p]("A", "d", func(...Approval) (h, error) { return h{}, nil }), "must not be variadic"},
		{"bad results", NewTool[p]("A", "d", func() (h, int) { return h{}, 0 }), "must return (handler) or (handler, error), got func() (pluginsdk.h, int)"},
		{"parameter the host cannot provide", NewTool[p]("A", "d", func(*os.File) (h, error) { return h{}, nil }),
			"tool A: constructor parameter 1 is *os.File, which the host cannot provide; want func(...) (H, error) or func(...) H, " +
				"where H implements pluginsdk.Handler[github.com/kosong-host/kosong-host/pluginsdk.p] and each parameter is one of " +
				"pluginsdk.Approval, pluginsdk.Environment, pluginsdk.Session, pluginsdk.Config, pluginsdk.Progress, pluginsdk.UserInput, pluginsdk.Model, pluginsdk.Editor, pluginsdk.Terminal, hclog.Logger"},
		{"raw tool with a typed handler", NewRawTool("A", "d", []byte(`{}`), func() (h, error) { return h{}, nil }),
			"returns pluginsdk.h, which does not implement pluginsdk.RawHandler; want func(...) (H, error)"},
		{"wrong handler", NewTool[p]("A", "d", func() (string, error) { return "", nil }), "returns string, which does not implement"},
		{"params not a struct", NewTool[int]("A", "d", func() (HandlerFunc[int], error) { return nil, nil }), "tool A: parameters type int: must be a struct"},
		{"raw schema not JSON", NewRawTool("A", "d", []byte("{"), func() (RawHandlerFunc, error) { return nil, nil }), "tool A: schema is not valid JSON"},
		{"no file system", NewTool[p]("A", "d", func() (h, error) { return h{}, nil }, WithDescriptionFile(nil, "a.md", nil)), "description a.md: no file system given"},
		{"missing description file", NewTool[p]("A", "d", func() (h, error) { return h{}, nil }, WithDescriptionFile(fstest.MapFS{}, "a.md", nil)), "description a.md: open a.md"},
		{"template error", NewTool[p]("A", "d", func() (h, error) { return h{}, nil },
			WithDescriptionFile(fstest.MapFS{"a.md": {Data: []byte("{{.Missing}}")}}, "a.md", map[string]string{})), "description a.md"},
		{"read-only and destructive", NewTool[p]("A", "d", func() (h, error) { return h{}, nil }, ReadOnly(), Destructive()),
			"tool A: declared both read-only and destructive"},
		{"destructive and read-only", NewTool[p]("A", "d", func() (h, error) { return h{}, nil }, Destructive(), ReadOnly()),
			"tool A: declared both read-only and destructive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Known when the tool is declared, and refused by Serve.
			if err := tt.def.Err(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Err() = %v, want %q", err, tt.want)
			}
			err := checkDefinitions([]Definition{tt.def})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	ok := NewTool[p]("A", "d", func() (h, error) { return h{}, nil })
	if err := checkDefinitions([]Definition{ok, ok}); err == nil || !strings.Contains(err.Error(), "tool A is declared twice") {
		t.Fatalf("duplicate: %v", err)
	}
	if err := checkDefinitions(nil); err == nil || !strings.Contains(err.Error(), "no tools to serve") {
		t.Fatalf("none: %v", err)
	}
	if err := checkDefinitions([]Definition{ok}); err != nil {
		t.Fatalf("valid declaration: %v", err)
	}
}
