// Package testbin builds the project's binaries for end-to-end tests, once
// per test process, so tests launch real plugins through the real host.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

var (
	mu    sync.Mutex
	built = map[string]string{}
	dir   string
)

// Root is the repository root (the folder holding go.mod).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Build builds the main package at pkg (a path relative to the repository
// root, e.g. "plugins/echo") as name into a shared temporary folder and
// returns the binary's path. Repeated calls reuse the binary.
func Build(pkg, name string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	key := pkg + "\x00" + name
	if p, ok := built[key]; ok {
		return p, nil
	}
	if dir == "" {
		d, err := os.MkdirTemp("", "kosong-testbin-")
		if err != nil {
			return "", err
		}
		dir = d
	}
	out := filepath.Join(dir, name)
	if sub := filepath.Dir(name); sub != "." {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return "", err
		}
	}
	cmd := exec.Command("go", "build", "-o", out, "./"+strings.TrimPrefix(pkg, "./"))
	cmd.Dir = Root()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	built[key] = out
	return out, nil
}

// Dir is the folder the binaries are built into ("" before the first Build).
func Dir() string {
	mu.Lock()
	defer mu.Unlock()
	return dir
}

// Cleanup removes the built binaries; call it from TestMain.
func Cleanup() {
	mu.Lock()
	defer mu.Unlock()
	if dir != "" {
		os.RemoveAll(dir)
		dir = ""
		built = map[string]string{}
	}
}
