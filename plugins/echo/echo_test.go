package echo

import (
	"flag"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden schema files in testdata/")

func TestSchemasGolden(t *testing.T) { plugintest.CheckSchemas(t, *update, definitions()...) }

func TestEcho(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	tests := []struct{ args, want string }{
		{`{"text":"hi"}`, "hi"},
		{`{"text":"multi\nline ünïcode"}`, "multi\nline ünïcode"},
	}
	for _, tt := range tests {
		if got := h.MustCall(t, "Echo", tt.args); got.Kind != pluginsdk.KindOk || got.Text() != tt.want || got.Brief != "echoed" {
			t.Errorf("Echo(%s) = %+v", tt.args, got)
		}
	}
}
