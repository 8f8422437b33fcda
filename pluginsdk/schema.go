package pluginsdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// paramsSchema is the JSON Schema of a typed tool's parameters struct.
type paramsSchema struct {
	raw json.RawMessage
	// resolved applies the defaults; nil when no property has one.
	resolved *jsonschema.Resolved
}

// schemaFor generates the JSON Schema of the parameters struct P with
// google/jsonschema-go (json tags name the properties, omitempty/omitzero
// make them optional, the jsonschema tag is the description) and adds the
// keywords of the field tags that keywordTags lists.
func schemaFor[P any]() (paramsSchema, error) {
	t := reflect.TypeFor[P]()
	fail := func(err error) (paramsSchema, error) {
		return paramsSchema{raw: json.RawMessage(`{"type":"object"}`)}, fmt.Errorf("parameters type %s: %w", t, err)
	}
	if t.Kind() != reflect.Struct {
		return fail(errors.New("must be a struct"))
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner // drop ForType's "ForType(T): ", which repeats the type
		}
		return fail(err)
	}
	var w tagWalker
	if err := w.fields(t, s, false); err != nil {
		return fail(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return fail(err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return fail(err)
	}
	ps := paramsSchema{raw: raw}
	if w.defaults {
		if _, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
			return fail(fmt.Errorf("a default does not fit its property: %w", err))
		}
		ps.resolved = resolved
	}
	return ps, nil
}

// decode decodes JSON arguments into v, first filling absent properties
// from their schema defaults, in nested objects too. Empty arguments mean {}.
func (s paramsSchema) decode(args json.RawMessage, v any) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if s.resolved != nil {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber() // keep numbers as written
		var inst any
		if err := dec.Decode(&inst); err != nil {
			return err
		}
		if _, ok := inst.(map[string]any); ok {
			if err := s.resolved.ApplyDefaults(&inst); err != nil {
				return err
			}
			b, err := json.Marshal(inst)
			if err != nil {
				return err
			}
			args = b
		}
	}
	return json.Unmarshal(args, v)
}

// keywordTags are the struct tags that add a JSON Schema keyword to the
// field's property, named as the keyword (as in huma and other Go schema
// generators). default and enum values are the literal text for a string,
// JSON otherwise; enum separates its values with commas, and on an array
// applies to the items.
var keywordTags = []struct {
	name string
	set  func(s *jsonschema.Schema, v string) error
}{
	{"default", func(s *jsonschema.Schema, v string) error {
		d, err := tagValue(s, v)
		if err != nil {
			return err
		}
		s.Default, err = json.Marshal(d)
		return err
	}},
	{"enum", func(s *jsonschema.Schema, v string) error {
		target := s
		if isType(s, "array") && s.Items != nil {
			target = s.Items
		}
		for _, part := range strings.Split(v, ",") {
			e, err := tagValue(target, part)
			if err != nil {
				return err
			}
			target.Enum = append(target.Enum, e)
		}
		return nil
	}},
	{"minimum", setFloat(func(s *jsonschema.Schema) **float64 { return &s.Minimum })},
	{"maximum", setFloat(func(s *jsonschema.Schema) **float64 { return &s.Maximum })},
	{"exclusiveMinimum", setFloat(func(s *jsonschema.Schema) **float64 { return &s.ExclusiveMinimum })},
	{"exclusiveMaximum", setFloat(func(s *jsonschema.Schema) **float64 { return &s.ExclusiveMaximum })},
	{"minLength", setCount(func(s *jsonschema.Schema) **int { return &s.MinLength })},
	{"maxLength", setCount(func(s *jsonschema.Schema) **int { return &s.MaxLength })},
	{"minItems", setCount(func(s *jsonschema.Schema) **int { return &s.MinItems })},
	{"maxItems", setCount(func(s *jsonschema.Schema) **int { return &s.MaxItems })},
	{"pattern", func(s *jsonschema.Schema, v string) error {
		if _, err := regexp.Compile(v); err != nil {
			return err
		}
		s.Pattern = v
		return nil
	}},
	{"format", func(s *jsonschema.Schema, v string) error { s.Format = v; return nil }},
}

// ignoredTags are tags of other schema generators that this SDK does not
// read; a field carrying one is a declaration error rather than a silently
// lost description or keyword.
var ignoredTags = []string{"jsonschema_description", "jsonschema_extras"}

func setFloat(field func(*jsonschema.Schema) **float64) func(*jsonschema.Schema, string) error {
	return func(s *jsonschema.Schema, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", v)
		}
		*field(s) = &f
		return nil
	}
}

func setCount(field func(*jsonschema.Schema) **int) func(*jsonschema.Schema, string) error {
	return func(s *jsonschema.Schema, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a count", v)
		}
		*field(s) = &n
		return nil
	}
}

// tagValue reads a default or enum value for schema s: the text itself for
// a string, JSON otherwise.
func tagValue(s *jsonschema.Schema, v string) (any, error) {
	if isType(s, "string") {
		return v, nil
	}
	var x any
	if err := json.Unmarshal([]byte(v), &x); err != nil {
		return nil, fmt.Errorf("%q is not JSON", v)
	}
	return x, nil
}

func isType(s *jsonschema.Schema, t string) bool {
	return s.Type == t || slices.Contains(s.Types, t)
}

// tagWalker adds the keywords of field tags to a generated schema.
type tagWalker struct {
	defaults bool // some property has a default
}

// fields adds the keywords of t's field tags to the properties of s, the
// schema generated for t, and descends into nested structs (fields,
// pointers, elements of slices, arrays and maps). inElements is set below
// the elements of a slice, array or map, where defaults are not applied.
func (w *tagWalker) fields(t reflect.Type, s *jsonschema.Schema, inElements bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return w.fields(t.Elem(), s.Items, true)
		}
		return nil
	case reflect.Map:
		if s.AdditionalProperties != nil {
			return w.fields(t.Elem(), s.AdditionalProperties, true)
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	if s.Properties == nil {
		return nil // a type with its own schema, such as time.Time
	}
	for _, f := range reflect.VisibleFields(t) {
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if err := w.tags(f, ps, slices.Contains(s.Required, name), inElements); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if err := w.fields(f.Type, ps, inElements); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	return nil
}

// tags applies one field's keyword tags to its property schema.
func (w *tagWalker) tags(f reflect.StructField, ps *jsonschema.Schema, required, inElements bool) error {
	for _, tag := range ignoredTags {
		if _, ok := f.Tag.Lookup(tag); ok {
			return fmt.Errorf("tag %s is not read: the whole jsonschema tag is the description, and keywords have tags of their own (default, enum, minimum...)", tag)
		}
	}
	// A slice is offered to the model as an array: null would only mean
	// the same as leaving the property out.
	if f.Type.Kind() == reflect.Slice && slices.Equal(ps.Types, []string{"null", "array"}) {
		ps.Type, ps.Types = "array", nil
	}
	for _, kt := range keywordTags {
		v, ok := f.Tag.Lookup(kt.name)
		if !ok {
			continue
		}
		if kt.name == "default" {
			switch {
			case required:
				return fmt.Errorf("default %q on a required property (add omitempty to its json tag)", v)
			case inElements:
				return fmt.Errorf("default %q inside the elements of a list or map, where defaults are not applied", v)
			}
			w.defaults = true
		}
		if err := kt.set(ps, v); err != nil {
			return fmt.Errorf("tag %s: %w", kt.name, err)
		}
	}
	return nil
}

// jsonName is the property name encoding/json gives field f; ok is false
// for a field that is no property: unexported, "-", or embedded (the
// generator makes the fields of an embedded struct properties of their own).
func jsonName(f reflect.StructField) (string, bool) {
	if f.Anonymous || !f.IsExported() {
		return "", false
	}
	tag, hasTag := f.Tag.Lookup("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if !hasTag || name == "" {
		return f.Name, true
	}
	return name, true
}
