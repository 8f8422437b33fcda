package testcomponent

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// NpmPackage installs the npm package pkg at version once into
// UserCacheDir/kosong-host-test/npm-NAME-VERSION and returns that folder
// (its node_modules holds the package and its dependencies). Parallel
// test processes install it once: the install holds a lock file.
func NpmPackage(pkg, version string) (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("testcomponent: npm is not installed, needed for %s@%s", pkg, version)
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
	cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", "--prefix", dir, pkg+"@"+version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testcomponent: npm install %s@%s: %v: %s", pkg, version, err, lastLine(out))
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return "", fmt.Errorf("testcomponent: %w", err)
	}
	return dir, nil
}
