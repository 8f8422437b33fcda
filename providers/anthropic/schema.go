package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// InputSchema adapts a tool's JSON Schema to what Anthropic accepts as
// input_schema: an object schema ("type": "object"; added when missing)
// without oneOf, anyOf or allOf at the top level (the object branches of
// such a combinator are merged into the top level: their properties
// joined, a property required when allOf requires it or when every branch
// of anyOf/oneOf does). Anything below the top level is kept as is. An
// empty schema is an object without properties; a schema that is not a
// JSON object, or describes something other than an object, is an error.
func InputSchema(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, fmt.Errorf("parameters schema is not a JSON object: %w", err)
	}
	if t, ok := schema["type"]; ok && t != "object" {
		return nil, fmt.Errorf("parameters schema must describe an object, not %v", t)
	}
	schema["type"] = "object"
	for _, comb := range []string{"allOf", "anyOf", "oneOf"} {
		branches, ok := schema[comb].([]any)
		delete(schema, comb)
		if !ok {
			continue
		}
		mergeBranches(schema, branches, comb == "allOf")
	}
	return schema, nil
}

func mergeBranches(schema map[string]any, branches []any, all bool) {
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	required := stringList(schema["required"])
	var common []string // required by every branch so far
	for i, b := range branches {
		bm, ok := b.(map[string]any)
		if !ok {
			continue
		}
		if bp, ok := bm["properties"].(map[string]any); ok {
			for k, v := range bp {
				if _, dup := props[k]; !dup {
					props[k] = v
				}
			}
		}
		req := stringList(bm["required"])
		switch {
		case all:
			required = appendNew(required, req...)
		case i == 0:
			common = req
		default:
			common = slices.DeleteFunc(common, func(s string) bool { return !slices.Contains(req, s) })
		}
	}
	if !all {
		required = appendNew(required, common...)
	}
	schema["properties"] = props
	if len(required) > 0 {
		list := make([]any, len(required))
		for i, r := range required {
			list[i] = r
		}
		schema["required"] = list
	}
}

func stringList(v any) []string {
	var out []string
	for _, x := range asSlice(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func appendNew(list []string, more ...string) []string {
	for _, s := range more {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}
