package testcomponent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NpmPackage installs the npm package pkg at version once into
// UserCacheDir/kosong-host-test/npm-NAME-VERSION and returns that folder
// (its node_modules holds the package and its dependencies; a CommonJS
// script finds them with NODE_PATH set to DIR/node_modules). Parallel test
// processes install it once: the install holds a lock file. Install
// scripts are not run.
func NpmPackage(pkg, version string) (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("testcomponent: %s@%s needs npm: %w", pkg, version, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("testcomponent: no cache dir for %s: %w", pkg, err)
	}
	name := strings.NewReplacer("@", "", "/", "-").Replace(pkg)
	dir := filepath.Join(cache, "kosong-host-test", "npm-"+name+"-"+version)
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testcomponent: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("testcomponent: lock for %s: %w", pkg, err)
	}
	defer unlock()
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--no-save", "--ignore-scripts", "--loglevel=error", "--prefix", dir, pkg+"@"+version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testcomponent: npm install %s@%s: %v: %s", pkg, version, err, lastLine(out))
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return "", fmt.Errorf("testcomponent: %w", err)
	}
	return dir, nil
}

// NeedNPM is NpmPackage for a test: the folder, or, when the package
// cannot be installed (no npm, no registry), a skip, or a failure under CI
// (CI set), where .ci/run promises npm.
func NeedNPM(t testing.TB, pkg, version string) string {
	t.Helper()
	dir, err := NpmPackage(pkg, version)
	if err != nil {
		Missing(t, err)
	}
	return dir
}
