package plugintest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// CheckSchemas compares each tool's described parameters schema with the
// golden file testdata/NAME.schema.json, and checks that every tool has a
// description. With update set (usually from a -update test flag) it
// rewrites the golden files instead.
func CheckSchemas(t *testing.T, update bool, defs ...pluginsdk.Definition) {
	t.Helper()
	h, _ := Load(t, Options{}, defs...)
	specs := h.Describe(t)
	if len(specs) == 0 {
		t.Fatal("no tools described")
	}
	for _, spec := range specs {
		t.Run(spec.Name, func(t *testing.T) {
			if spec.Description == "" {
				t.Error("empty description")
			}
			var got bytes.Buffer
			if err := json.Indent(&got, spec.Schema, "", "  "); err != nil {
				t.Fatalf("schema is not JSON: %v", err)
			}
			got.WriteByte('\n')
			path := filepath.Join("testdata", spec.Name+".schema.json")
			if update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("schema differs from %s (run go test -update if the change is intended):\n%s", path, got.String())
			}
		})
	}
}
