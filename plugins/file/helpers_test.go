package file

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

// writeTree creates files (path -> content) under dir; a path ending in "/"
// is a directory.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func harness(t *testing.T, work string, approver plugintest.Approver) *plugintest.Harness {
	t.Helper()
	return plugintest.New(t, plugintest.Options{WorkDir: work, Approver: approver}, definitions()...)
}

// compileSchema resolves a tool's parameters schema, as the host does to
// validate arguments.
func compileSchema(t *testing.T, h *plugintest.Harness, tool string) *jsonschema.Resolved {
	t.Helper()
	for _, spec := range h.Describe(t) {
		if spec.Name != tool {
			continue
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(spec.Schema, &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("schema of %s does not resolve: %v", tool, err)
		}
		return rs
	}
	t.Fatalf("no tool %s", tool)
	return nil
}

func validates(t *testing.T, s *jsonschema.Resolved, args string) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		t.Fatal(err)
	}
	return s.Validate(v) == nil
}
