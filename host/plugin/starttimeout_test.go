package plugin_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/plugin"
)

// TestStartTimeouts: a plugin that never completes the handshake, and one
// that completes it but never describes its tools, are both start timeouts
// (plugin.ErrStartTimeout), which Load reports together in one line apart
// from the other failures.
func TestStartTimeouts(t *testing.T) {
	hang := build(t, "host/testdata/plugins/hang")
	slow := build(t, "host/testdata/plugins/unaryonly")
	const limit = 3 * time.Second
	specs := []plugin.Spec{
		{Config: plugin.Config{Name: "hang", Path: hang, StartTimeout: limit, Getenv: testEnv}},
		{Config: plugin.Config{Name: "slow", Path: slow, Args: []string{"slow-describe"}, StartTimeout: limit, Getenv: testEnv}},
		{Config: plugin.Config{Name: "missing", Path: filepath.Join(t.TempDir(), "nowhere"), StartTimeout: limit, Getenv: testEnv}},
	}
	for _, sp := range specs[:2] {
		_, err := plugin.Launch(context.Background(), sp.Config)
		var le *plugin.Error
		if !errors.Is(err, plugin.ErrStartTimeout) || !errors.As(err, &le) {
			t.Fatalf("%s: %v is not a start timeout", sp.Name, err)
		}
		// On a loaded machine the slow plugin may miss the handshake too.
		if !strings.Contains(le.Reason, "did not complete the plugin handshake within 3s") &&
			!(sp.Name == "slow" && strings.Contains(le.Reason, "did not describe its tools within 3s")) {
			t.Errorf("%s: reason %q", sp.Name, le.Reason)
		}
	}
	l := plugin.Load(context.Background(), specs, plugin.Options{})
	t.Cleanup(l.Close)
	if got, want := l.TimedOut.String(), "2 plugins did not start within 3s (hang, slow)"; got != want {
		t.Errorf("TimedOut = %q, want %q", got, want)
	}
	if len(l.Failures) != 1 || !strings.Contains(l.Failures[0], "plugin missing:") {
		t.Errorf("Failures = %q, want the missing binary only", l.Failures)
	}
	one := plugin.StartTimeouts{Plugins: []string{"shell"}, After: time.Second}
	if got, want := one.String(), "plugin shell did not start within 1s"; got != want {
		t.Errorf("one timeout: %q, want %q", got, want)
	}
}
