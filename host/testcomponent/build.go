// Package testcomponent builds the real components end-to-end tests run
// against (an OCI registry, a trace backend, a workflow server) from the
// Go module proxy, once per machine: a build is kept in the user's cache
// dir and reused by later test runs.
package testcomponent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GoBinary returns the path of the command at pkg (a package path inside
// module mod, "." for the module's root) of mod at version, built once
// into UserCacheDir/kosong-host-test/NAME-VERSION/NAME. Test processes
// running in parallel build it once: the build holds a lock file.
//
// It builds with `go install mod/pkg@version` and, when that is refused
// (a module whose go.mod has replace directives), by downloading the
// module and running `go build` inside it.
func GoBinary(mod, version, pkg, name string) (bin string, err error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("testcomponent: no cache dir for %s: %w", name, err)
	}
	dir := filepath.Join(cache, "kosong-host-test", name+"-"+version)
	bin = filepath.Join(dir, name)
	if isExecutable(bin) {
		return bin, nil
	}
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testcomponent: %w", err)
	}
	if os.IsNotExist(statErr) {
		defer func() {
			if err != nil { // nothing of a failed build is kept
				os.RemoveAll(dir)
			}
		}()
	}
	unlock, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("testcomponent: lock for %s: %w", name, err)
	}
	defer unlock()
	if isExecutable(bin) { // built by another test process while we waited
		return bin, nil
	}
	tmp := filepath.Join(dir, "tmp")
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", fmt.Errorf("testcomponent: %w", err)
	}
	defer os.RemoveAll(tmp)
	target := strings.TrimSuffix(mod+"/"+strings.TrimPrefix(pkg, "./"), "/.")
	install := exec.Command("go", "install", "-trimpath", target+"@"+version)
	install.Env = append(os.Environ(), "GOBIN="+tmp, "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false", "GOWORK=off")
	out, installErr := install.CombinedOutput()
	built := filepath.Join(tmp, filepath.Base(target))
	if installErr != nil {
		src, err := download(mod, version)
		if err != nil {
			return "", fmt.Errorf("testcomponent: go install %s@%s: %v: %s; and %w", target, version, installErr, lastLine(out), err)
		}
		built = filepath.Join(tmp, name)
		b := exec.Command("go", "build", "-trimpath", "-o", built, "./"+strings.TrimPrefix(pkg, "./"))
		b.Dir = src
		b.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false -mod=mod", "GOWORK=off")
		if out, err := b.CombinedOutput(); err != nil {
			return "", fmt.Errorf("testcomponent: go build %s in %s: %v: %s", pkg, src, err, lastLine(out))
		}
	}
	if err := os.Rename(built, bin); err != nil {
		return "", fmt.Errorf("testcomponent: %w", err)
	}
	return bin, nil
}

// download fetches mod@version into the module cache and returns its
// folder.
func download(mod, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod+"@"+version)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v: %s", mod, version, err, lastLine(append(out, stderr.Bytes()...)))
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", mod, version, err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", mod, version, info.Error)
	}
	return info.Dir, nil
}

// Need is GoBinary for a test: the component's path, or, when it cannot
// be built, a skip, or a failure under CI (CI set), where .ci/run promises
// every component.
func Need(t testing.TB, mod, version, pkg, name string) string {
	t.Helper()
	bin, err := GoBinary(mod, version, pkg, name)
	if err != nil {
		Missing(t, err)
	}
	return bin
}

// Missing ends a test whose component is not there: a failure under CI,
// a skip elsewhere.
func Missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%v (CI promises it: see .ci/run)", err)
	}
	t.Skipf("%v", err)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
