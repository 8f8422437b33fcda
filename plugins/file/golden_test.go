package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden schema files in testdata/")

// TestSchemasGolden compares each tool's Describe schema with
// testdata/NAME.schema.json; `go test -update` rewrites the files.
func TestSchemasGolden(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	specs := h.Describe(t)
	if len(specs) == 0 {
		t.Fatal("no tools described")
	}
	for _, spec := range specs {
		t.Run(spec.GetName(), func(t *testing.T) {
			if spec.GetDescription() == "" {
				t.Error("empty description")
			}
			var got bytes.Buffer
			if err := json.Indent(&got, []byte(spec.GetParametersSchema()), "", "  "); err != nil {
				t.Fatalf("schema is not JSON: %v", err)
			}
			got.WriteByte('\n')
			path := filepath.Join("testdata", spec.GetName()+".schema.json")
			if *update {
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
