package testcomponent

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNpmPackage installs a small npm package once and finds it
// installed the second time.
func TestNpmPackage(t *testing.T) {
	dir, err := NpmPackage("is-number", "7.0.0")
	if err != nil {
		Missing(t, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "is-number", "package.json")); err != nil {
		t.Fatalf("installed into %s, but: %v", dir, err)
	}
	again, err := NpmPackage("is-number", "7.0.0")
	if err != nil || again != dir {
		t.Fatalf("second NpmPackage = %q, %v; want %q", again, err, dir)
	}
}
