package pluginsdk_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

type floodParams struct {
	Runes int `json:"runes"`
}

// TestOutputCapsOnTheWire checks that the SDK caps every result before it
// goes on the wire and saves the full output under the session state dir.
func TestOutputCapsOnTheWire(t *testing.T) {
	flood := pluginsdk.NewTool[floodParams]("Flood", "Prints a lot.",
		func() (pluginsdk.HandlerFunc[floodParams], error) {
			return func(_ context.Context, p floodParams) pluginsdk.Result {
				return pluginsdk.Ok(strings.Repeat("🙂\n", p.Runes/2))
			}, nil
		})
	state := t.TempDir()
	h := plugintest.New(t, plugintest.Options{StateDir: state}, flood)

	small := h.MustCall(t, "Flood", `{"runes": 10}`)
	if small.Text() != strings.Repeat("🙂\n", 5) || small.Message != "" {
		t.Fatalf("small output changed: %+v", small)
	}

	big := h.MustCall(t, "Flood", `{"runes": 120000}`)
	if n := utf8.RuneCountInString(big.Text()); n > pluginsdk.MaxOutputChars || !strings.HasSuffix(big.Text(), pluginsdk.TruncatedMarker) {
		t.Fatalf("output not capped: %d runes", n)
	}
	path := filepath.Join(state, "outputs", "call_2.txt")
	if !strings.Contains(big.Message, "truncated") || !strings.Contains(big.Message, path) {
		t.Fatalf("message = %q", big.Message)
	}
	saved, err := os.ReadFile(path)
	if err != nil || utf8.RuneCount(saved) != 120000 {
		t.Fatalf("saved output: %v, %d runes", err, utf8.RuneCount(saved))
	}
}
