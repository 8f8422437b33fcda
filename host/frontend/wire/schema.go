package wire

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// metaFS holds the JSON Schema 2020-12 meta-schema (json-schema.org),
// which the parameters of an external tool are checked against, as Kimi
// CLI checks them.
//
//go:embed metaschema
var metaFS embed.FS

const metaPrefix = "https://json-schema.org/draft/2020-12/"

var metaSchema = sync.OnceValues(func() (*jsonschema.Resolved, error) {
	root, err := loadMeta("schema")
	if err != nil {
		return nil, err
	}
	return root.Resolve(&jsonschema.ResolveOptions{Loader: func(u *url.URL) (*jsonschema.Schema, error) {
		name, ok := strings.CutPrefix(u.String(), metaPrefix)
		if !ok {
			return nil, fmt.Errorf("no meta-schema %s", u)
		}
		return loadMeta(name)
	}})
})

func loadMeta(name string) (*jsonschema.Schema, error) {
	b, err := metaFS.ReadFile("metaschema/" + name + ".json")
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// checkSchema checks a tool's parameters against the meta-schema; the
// error is the validator's message.
func checkSchema(params json.RawMessage) error {
	var doc any
	if err := json.Unmarshal(params, &doc); err != nil {
		return fmt.Errorf("parameters are not JSON: %v", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return fmt.Errorf("parameters must be a JSON Schema object")
	}
	meta, err := metaSchema()
	if err != nil {
		return fmt.Errorf("the meta-schema did not load: %v", err)
	}
	if err := meta.Validate(doc); err != nil {
		lines := strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' })
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		return fmt.Errorf("invalid schema: %s", strings.Join(lines, " "))
	}
	return nil
}
