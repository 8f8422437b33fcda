package testcomponent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NPMPackage installs the npm package pkg at version once into
// UserCacheDir/kosong-host-test/NAME-VERSION and returns that folder (the
// package is in its node_modules; a CommonJS script finds it with
// NODE_PATH set to DIR/node_modules). Test processes running in parallel
// install it once: the install holds a lock file. It needs npm on PATH and
// the npm registry.
func NPMPackage(name, pkg, version string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("testcomponent: no cache dir for %s: %w", name, err)
	}
	dir := filepath.Join(cache, "kosong-host-test", name+"-"+version)
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Errorf("testcomponent: %s needs npm: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testcomponent: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("testcomponent: lock for %s: %w", name, err)
	}
	defer unlock()
	if _, err := os.Stat(done); err == nil { // installed by another test process while we waited
		return dir, nil
	}
	install := exec.Command("npm", "install", "--no-save", "--no-audit", "--no-fund", "--ignore-scripts",
		"--prefix", dir, pkg+"@"+version)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testcomponent: npm install %s@%s: %v: %s", pkg, version, err, lastLine(out))
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return "", fmt.Errorf("testcomponent: %w", err)
	}
	return dir, nil
}

// NeedNPM is NPMPackage for a test: the folder, or, when the package
// cannot be installed (no npm, no registry), a skip, or a failure under
// CI (CI set), where .ci/run promises npm.
func NeedNPM(t testing.TB, name, pkg, version string) string {
	t.Helper()
	dir, err := NPMPackage(name, pkg, version)
	if err != nil {
		Missing(t, err)
	}
	return dir
}
