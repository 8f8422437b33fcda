package think

import (
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

func TestThink(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	for _, args := range []string{`{"thought": "First read the tests, then fix the parser."}`, `{"thought": ""}`, `{"thought": "世界 🙂"}`} {
		got := h.Call(t, "Think", args)
		if got.Kind != pluginsdk.KindOk || got.Output != "" || got.Message != "" || len(got.Display) != 0 {
			t.Fatalf("%s: got %+v", args, got)
		}
	}
	if len(h.Approvals()) != 0 {
		t.Fatal("Think asked for approval")
	}
}
