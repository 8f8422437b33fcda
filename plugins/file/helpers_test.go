package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

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

// compileSchema compiles a tool's parameters schema as the host would to
// validate arguments.
func compileSchema(t *testing.T, h *plugintest.Harness, tool string) *jsonschema.Schema {
	t.Helper()
	for _, spec := range h.Describe(t) {
		if spec.Name != tool {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec.Schema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("schema.json", doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("schema.json")
		if err != nil {
			t.Fatalf("schema of %s does not compile: %v", tool, err)
		}
		return s
	}
	t.Fatalf("no tool %s", tool)
	return nil
}

func validates(t *testing.T, s *jsonschema.Schema, args string) bool {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(args))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v) == nil
}
