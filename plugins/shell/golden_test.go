package shell

import (
	"flag"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

var update = flag.Bool("update", false, "rewrite the golden schema files in testdata/")

// TestSchemasGolden compares each tool's schema with testdata/NAME.schema.json.
func TestSchemasGolden(t *testing.T) { plugintest.CheckSchemas(t, *update, definitions()...) }
