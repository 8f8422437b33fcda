package google

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"
)

// maxSchemaDepth bounds nesting, recursive $refs included.
const maxSchemaDepth = 24

// Schema adapts a tool's JSON Schema to the OpenAPI subset Gemini accepts
// for function parameters (genai.Schema):
//
//   - types are upper case; a type list such as ["string", "null"] becomes
//     the type with nullable, several non-null types an anyOf;
//   - oneOf becomes anyOf; allOf is merged into one schema; an anyOf branch
//     {"type": "null"} becomes nullable;
//   - local $refs (#/$defs/..., #/definitions/...) are inlined;
//   - const becomes a one-value enum; enums of non-strings are dropped
//     (Gemini's enums are strings);
//   - format is kept only where Gemini accepts it (enum and date-time for
//     strings, float and double for numbers, int32 and int64 for integers);
//   - an object without properties below the top level loses its type
//     (Gemini rejects an OBJECT without properties);
//   - required names only properties that exist;
//   - everything else ($schema, $id, additionalProperties, not, if/then,
//     patternProperties, exclusiveMinimum…) is dropped.
//
// A schema without parameters gives nil (the function takes none).
func Schema(raw json.RawMessage) (*genai.Schema, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("parameters schema is not a JSON object: %w", err)
	}
	c := converter{root: root}
	s := c.convert(root, 0)
	if s.Type == "" && len(s.Properties) > 0 {
		s.Type = genai.TypeObject
	}
	if s.Type != genai.TypeObject && len(s.AnyOf) == 0 {
		if s.Type == "" {
			return nil, nil
		}
		return nil, fmt.Errorf("parameters schema must describe an object, not %s", strings.ToLower(string(s.Type)))
	}
	if s.Type == genai.TypeObject && len(s.Properties) == 0 && len(s.AnyOf) == 0 {
		return nil, nil
	}
	return s, nil
}

type converter struct{ root map[string]any }

var typeNames = map[string]genai.Type{
	"string": genai.TypeString, "number": genai.TypeNumber, "integer": genai.TypeInteger,
	"boolean": genai.TypeBoolean, "array": genai.TypeArray, "object": genai.TypeObject, "null": genai.TypeNULL,
}

var formats = map[genai.Type][]string{
	genai.TypeString:  {"enum", "date-time"},
	genai.TypeNumber:  {"float", "double"},
	genai.TypeInteger: {"int32", "int64"},
}

// resolve follows a local $ref.
func (c converter) resolve(ref string) (map[string]any, bool) {
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	var cur any = c.root
	for _, seg := range strings.Split(p, "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = m[seg]
	}
	m, ok := cur.(map[string]any)
	return m, ok
}

func (c converter) convert(node map[string]any, depth int) *genai.Schema {
	s := &genai.Schema{}
	if depth > maxSchemaDepth {
		s.Description, _ = node["description"].(string)
		return s
	}
	if ref, ok := node["$ref"].(string); ok {
		if target, ok := c.resolve(ref); ok {
			merged := map[string]any{}
			for k, v := range target {
				merged[k] = v
			}
			for k, v := range node {
				if k != "$ref" {
					merged[k] = v
				}
			}
			return c.convert(merged, depth+1)
		}
	}
	if all, ok := node["allOf"].([]any); ok {
		merged := map[string]any{}
		for k, v := range node {
			if k != "allOf" {
				merged[k] = v
			}
		}
		for _, b := range all {
			if bm, ok := b.(map[string]any); ok {
				if ref, ok := bm["$ref"].(string); ok {
					if target, ok := c.resolve(ref); ok {
						bm = target
					}
				}
				mergeInto(merged, bm)
			}
		}
		return c.convert(merged, depth+1)
	}

	s.Description, _ = node["description"].(string)
	s.Title, _ = node["title"].(string)
	s.Default = node["default"]

	var types []genai.Type
	nullable := false
	switch t := node["type"].(type) {
	case string:
		if gt, ok := typeNames[t]; ok {
			types = append(types, gt)
		}
	case []any:
		for _, x := range t {
			if name, ok := x.(string); ok {
				if gt, ok := typeNames[name]; ok {
					types = append(types, gt)
				}
			}
		}
	}
	if i := slices.Index(types, genai.TypeNULL); i >= 0 && len(types) > 1 {
		types = slices.Delete(types, i, i+1)
		nullable = true
	}
	switch len(types) {
	case 0:
	case 1:
		s.Type = types[0]
	default:
		for _, t := range types {
			branch := c.convert(withType(node, t), depth+1)
			branch.Description, branch.Title, branch.Default = "", "", nil
			s.AnyOf = append(s.AnyOf, branch)
		}
		if nullable {
			s.Nullable = genai.Ptr(true)
		}
		return s
	}
	if nullable {
		s.Nullable = genai.Ptr(true)
	}
	if n, ok := node["nullable"].(bool); ok && n {
		s.Nullable = genai.Ptr(true)
	}

	if f, ok := node["format"].(string); ok && slices.Contains(formats[s.Type], f) {
		s.Format = f
	}
	if vals, ok := node["enum"].([]any); ok {
		s.Enum = stringsOnly(vals)
	}
	if v, ok := node["const"].(string); ok {
		s.Enum = []string{v}
	}
	if len(s.Enum) > 0 && s.Type == "" {
		s.Type = genai.TypeString
	}
	if s.Type != genai.TypeString && s.Type != "" {
		s.Enum = nil
	}
	s.MinLength = intPtr(node["minLength"])
	s.MaxLength = intPtr(node["maxLength"])
	s.MinItems = intPtr(node["minItems"])
	s.MaxItems = intPtr(node["maxItems"])
	s.MinProperties = intPtr(node["minProperties"])
	s.MaxProperties = intPtr(node["maxProperties"])
	s.Minimum = floatPtr(node["minimum"])
	s.Maximum = floatPtr(node["maximum"])
	if p, ok := node["pattern"].(string); ok {
		s.Pattern = p
	}
	if items, ok := node["items"].(map[string]any); ok {
		s.Items = c.convert(items, depth+1)
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for name, v := range props {
			pm, ok := v.(map[string]any)
			if !ok {
				pm = map[string]any{}
			}
			if s.Properties == nil {
				s.Properties = map[string]*genai.Schema{}
			}
			s.Properties[name] = c.convert(pm, depth+1)
		}
		for _, r := range asStrings(node["required"]) {
			if _, ok := s.Properties[r]; ok {
				s.Required = append(s.Required, r)
			}
		}
		if s.Type == "" {
			s.Type = genai.TypeObject
		}
	}
	if s.Type == genai.TypeArray && s.Items == nil {
		s.Items = &genai.Schema{Type: genai.TypeString}
	}
	for _, comb := range []string{"anyOf", "oneOf"} {
		branches, ok := node[comb].([]any)
		if !ok {
			continue
		}
		for _, b := range branches {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			if t, _ := bm["type"].(string); t == "null" {
				s.Nullable = genai.Ptr(true)
				continue
			}
			s.AnyOf = append(s.AnyOf, c.convert(bm, depth+1))
		}
	}
	if len(s.AnyOf) == 1 && s.Type == "" && len(s.Properties) == 0 {
		// A single branch left (the others were null): the branch itself.
		only := s.AnyOf[0]
		if only.Description == "" {
			only.Description = s.Description
		}
		if s.Nullable != nil {
			only.Nullable = s.Nullable
		}
		return only
	}
	if s.Type == genai.TypeObject && len(s.Properties) == 0 && depth > 0 {
		s.Type = "" // a free-form object: Gemini rejects OBJECT without properties
	}
	return s
}

func withType(node map[string]any, t genai.Type) map[string]any {
	out := map[string]any{}
	for k, v := range node {
		out[k] = v
	}
	out["type"] = strings.ToLower(string(t))
	return out
}

// mergeInto merges an allOf branch: properties and required are joined,
// other keys are taken when missing.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			props, _ := dst["properties"].(map[string]any)
			if props == nil {
				props = map[string]any{}
			}
			if sp, ok := v.(map[string]any); ok {
				for pk, pv := range sp {
					if _, dup := props[pk]; !dup {
						props[pk] = pv
					}
				}
			}
			dst["properties"] = props
		case "required":
			req := asStrings(dst["required"])
			for _, r := range asStrings(v) {
				if !slices.Contains(req, r) {
					req = append(req, r)
				}
			}
			list := make([]any, len(req))
			for i, r := range req {
				list[i] = r
			}
			dst["required"] = list
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	return stringsOnly(list)
}

// stringsOnly returns the values when they are all strings, else nil.
func stringsOnly(vals []any) []string {
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

func intPtr(v any) *int64 {
	f, ok := v.(float64)
	if !ok || f < 0 {
		return nil
	}
	n := int64(f)
	return &n
}

func floatPtr(v any) *float64 {
	f, ok := v.(float64)
	if !ok {
		return nil
	}
	return &f
}
