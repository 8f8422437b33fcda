package pluginsdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/invopop/jsonschema"
)

// schemaFor generates the JSON Schema of a parameters struct and collects the
// defaults of its top-level properties.
func schemaFor[P any]() (json.RawMessage, map[string]json.RawMessage, error) {
	t := reflect.TypeFor[P]()
	if t.Kind() != reflect.Struct {
		return json.RawMessage(`{"type":"object"}`), nil, fmt.Errorf("parameters type %s must be a struct", t)
	}
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	s := r.ReflectFromType(t)
	s.Version = ""
	s.ID = ""
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, nil, fmt.Errorf("schema of %s: %w", t, err)
	}
	var top struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, nil, fmt.Errorf("schema of %s: %w", t, err)
	}
	defaults := map[string]json.RawMessage{}
	for name, p := range top.Properties {
		if len(p.Default) > 0 {
			defaults[name] = p.Default
		}
	}
	return raw, defaults, nil
}

// decodeArgs decodes JSON arguments into v, filling absent top-level
// properties from their schema defaults. Empty arguments mean {}.
func decodeArgs(args json.RawMessage, defaults map[string]json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if len(defaults) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(args, &m); err != nil {
			return err
		}
		if m == nil {
			m = map[string]json.RawMessage{}
		}
		missing := false
		for k, d := range defaults {
			if _, ok := m[k]; !ok {
				m[k] = d
				missing = true
			}
		}
		if missing {
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			args = b
		}
	}
	return json.Unmarshal(args, v)
}
