package think

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

func TestThink(t *testing.T) {
	var logs bytes.Buffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug, JSONFormat: true})
	h := plugintest.New(t, plugintest.Options{Logger: logger}, definitions()...)
	for _, args := range []string{`{"thought": "First read the tests, then fix the parser."}`, `{"thought": ""}`, `{"thought": "世界 🙂"}`} {
		got := h.MustCall(t, "Think", args)
		if got.Kind != pluginsdk.KindOk || got.Text() != "" || got.Message != "" || len(got.Display) != 0 {
			t.Fatalf("%s: got %+v", args, got)
		}
	}
	// The thought's size is logged through the plugin's logger, never its text.
	if n := strings.Count(logs.String(), `"@message":"thought"`); n != 3 || strings.Contains(logs.String(), "parser") {
		t.Fatalf("logged %d thoughts:\n%s", n, logs.String())
	}
	if len(h.Approvals()) != 0 {
		t.Fatal("Think asked for approval")
	}
}
