package cosigntest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestStart builds (once per machine) cosign and runs it; .ci/run runs it
// first so that the build is done before the tests that need it.
func TestStart(t *testing.T) {
	bin := Need(t)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("cosign version: %v: %s", err, out)
	}
	if !strings.Contains(string(out), strings.TrimPrefix(Version, "v")) {
		t.Fatalf("cosign version does not say %s: %s", Version, out)
	}
}
