// Package arguments checks a tool call's JSON arguments against the tool's
// parameters schema (JSON Schema, draft 2020-12 or 07, with
// google/jsonschema-go, the library the SDK generates schemas with) and
// fills in the defaults of absent properties, in nested objects too.
//
// kosong-host checks every call with it before the call reaches a plugin
// (or an MCP server), and plugintest checks calls the same way, so that a
// tool's tests see the arguments, and the refusals, production does. A
// refusal is an *Error whose text is what the model reads:
//
//	Error parsing JSON arguments: unexpected EOF
//	Error validating JSON arguments: missing parameter "path"
//	Error validating JSON arguments: unknown parameter "cwd"
//	Error validating JSON arguments: parameter "text": type: 1 has type "integer", want "string"
package arguments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Brief is the one-line summary a user interface shows for refused
// arguments.
const Brief = "Invalid arguments"

// Kind says why arguments were refused.
type Kind int

// The kinds of refusal.
const (
	// Unparsable arguments are not one JSON value.
	Unparsable Kind = iota + 1
	// Invalid arguments are JSON that the schema does not accept.
	Invalid
)

// Error is arguments refused. Its text, one line of bounded length, starts
// with "Error parsing JSON arguments: " or "Error validating JSON
// arguments: ".
type Error struct {
	Kind Kind
	// Err says what is wrong (for Invalid, naming the parameter).
	Err error
}

func (e *Error) Error() string {
	if e.Kind == Unparsable {
		return "Error parsing JSON arguments: " + e.Err.Error()
	}
	return "Error validating JSON arguments: " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Schema is a tool's parameters schema, resolved to check arguments and
// fill in their defaults. It is safe for concurrent use.
type Schema struct {
	resolved *jsonschema.Resolved
	defaults bool // a property, at any depth of objects, has a default
}

// The $schema values the library validates by; any other draft (04, 06,
// 2019-09) is validated by 2020-12's rules, which share the keywords tool
// schemas use.
const (
	draft07   = "http://json-schema.org/draft-07/schema#"
	draft2020 = "https://json-schema.org/draft/2020-12/schema"
)

// Compile resolves a tool's parameters schema. The error is one line
// naming the tool ("tool NAME: parameters schema: ..."): a schema that is
// not JSON, that the library cannot resolve, or that applies itself to the
// value it validates (which no value could be validated against).
func Compile(tool string, raw []byte) (*Schema, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("tool %s: parameters schema is not JSON", tool)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("tool %s: parameters schema: %s", tool, oneLine(err.Error()))
	}
	switch {
	case s.Schema == "" || s.Schema == draft2020:
	case strings.Contains(s.Schema, "json-schema.org/draft-07/"):
		s.Schema = draft07
	default:
		s.Schema = ""
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: parameters schema: %s", tool, oneLine(err.Error()))
	}
	var doc any
	_ = json.Unmarshal(raw, &doc)
	if loc := selfApplying(doc); loc != "" {
		// The library would recurse until the stack overflows, which no
		// recover catches.
		return nil, fmt.Errorf("tool %s: parameters schema: the schema at %s applies itself to the same value "+
			"($ref through allOf, anyOf, oneOf, not, if, then or else without a nested property or item), so no value can be validated", tool, loc)
	}
	return &Schema{resolved: rs, defaults: propertiesHaveDefaults(&s)}, nil
}

// selfApplying returns the location (a JSON pointer) of a schema of doc
// that applies itself, through $ref, $dynamicRef and the in-place keywords,
// to the value it validates, or "" when there is none. References are
// resolved within the document: "#", "#/pointer" and "#anchor" against
// the nearest enclosing $id (or the root), and $id values; others (remote
// documents) are not followed.
func selfApplying(doc any) string {
	type node struct {
		obj  map[string]any
		base string // location of its resource: the nearest $id, or the root
	}
	nodes := map[string]node{}
	ids := map[string]string{} // $id value -> location
	var index func(v any, loc, base string)
	index = func(v any, loc, base string) {
		switch v := v.(type) {
		case map[string]any:
			if id, ok := v["$id"].(string); ok && loc != "#" && !strings.HasPrefix(id, "#") {
				base = loc
			}
			if id, ok := v["$id"].(string); ok {
				ids[id] = loc
			}
			nodes[loc] = node{obj: v, base: base}
			for k, c := range v {
				index(c, loc+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k), base)
			}
		case []any:
			for i, c := range v {
				index(c, loc+"/"+strconv.Itoa(i), base)
			}
		}
	}
	index(doc, "#", "#") // locations are "#" and JSON pointers after it
	resolve := func(ref, base string) (string, bool) {
		frag, isFrag := strings.CutPrefix(ref, "#")
		if !isFrag {
			loc, ok := ids[ref]
			return loc, ok
		}
		if unescaped, err := url.PathUnescape(frag); err == nil {
			frag = unescaped
		}
		if frag == "" || strings.HasPrefix(frag, "/") {
			_, ok := nodes[base+frag]
			return base + frag, ok
		}
		for loc, n := range nodes {
			if n.base == base && (n.obj["$anchor"] == frag || n.obj["$dynamicAnchor"] == frag || n.obj["$id"] == "#"+frag) {
				return loc, true
			}
		}
		return "", false
	}
	// in-place: the schemas that apply to the same value as the one at loc.
	inPlace := func(loc string) []string {
		n := nodes[loc]
		var out []string
		for _, k := range []string{"$ref", "$dynamicRef"} {
			if ref, ok := n.obj[k].(string); ok {
				if target, ok := resolve(ref, n.base); ok {
					out = append(out, target)
				}
			}
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			if list, ok := n.obj[k].([]any); ok {
				for i := range list {
					out = append(out, loc+"/"+k+"/"+strconv.Itoa(i))
				}
			}
		}
		for _, k := range []string{"not", "if", "then", "else"} {
			out = append(out, loc+"/"+k)
		}
		for _, k := range []string{"dependentSchemas", "dependencies"} {
			if m, ok := n.obj[k].(map[string]any); ok {
				for name := range m {
					out = append(out, loc+"/"+k+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(name))
				}
			}
		}
		return out
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(loc string) string
	visit = func(loc string) string {
		if _, ok := nodes[loc]; !ok {
			return "" // not an object schema (true, false, or absent)
		}
		switch state[loc] {
		case visiting:
			return loc
		case done:
			return ""
		}
		state[loc] = visiting
		for _, next := range inPlace(loc) {
			if found := visit(next); found != "" {
				return found
			}
		}
		state[loc] = done
		return ""
	}
	for loc := range nodes {
		if found := visit(loc); found != "" {
			return found
		}
	}
	return ""
}

// propertiesHaveDefaults reports whether a property of s, or of its
// properties' objects, has a default: where ApplyDefaults looks.
func propertiesHaveDefaults(s *jsonschema.Schema) bool {
	for _, p := range s.Properties {
		if p != nil && (p.Default != nil || propertiesHaveDefaults(p)) {
			return true
		}
	}
	return false
}

// Check validates a call's arguments and returns them with the defaults
// of absent properties filled in, in nested objects too; numbers reach
// the tool as written. Empty arguments and null are taken as {}. A
// default that does not fit its own property (an MCP server's schema may
// have one) would hand the tool what its schema forbids: the arguments
// then go as given, without defaults. The error is an *Error.
func (s *Schema) Check(args []byte) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	var inst any
	if err := decodeOne(args, &inst, false); err != nil {
		return nil, &Error{Kind: Unparsable, Err: bounded(err)}
	}
	if err := s.resolved.Validate(inst); err != nil {
		return nil, &Error{Kind: Invalid, Err: errors.New(validationMessage(err))}
	}
	if !s.defaults {
		return args, nil
	}
	// Again with numbers as written, so that the tool gets them unchanged.
	var exact any
	if err := decodeOne(args, &exact, true); err != nil {
		return nil, &Error{Kind: Unparsable, Err: bounded(err)}
	}
	if err := s.resolved.ApplyDefaults(&exact); err != nil {
		return nil, &Error{Kind: Invalid, Err: fmt.Errorf("applying defaults: %s", oneLine(err.Error()))}
	}
	b, err := json.Marshal(exact)
	if err != nil {
		return nil, &Error{Kind: Invalid, Err: fmt.Errorf("applying defaults: %w", err)}
	}
	var filled any
	if decodeOne(b, &filled, false) != nil || s.resolved.Validate(filled) != nil {
		return args, nil
	}
	return b, nil
}

// bounded cuts the message of a decoding error, which can quote a long
// number, to maxMessage characters.
func bounded(err error) error {
	if r := []rune(err.Error()); len(r) > maxMessage {
		return errors.New(string(r[:maxMessage]) + "…")
	}
	return err
}

// decodeOne decodes exactly one JSON value.
func decodeOne(data []byte, v any, useNumber bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if useNumber {
		dec.UseNumber()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more data after the arguments")
	}
	return nil
}

var (
	quoted      = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	schemaList  = regexp.MustCompile(` against any of \[[^\]]*\]`)
	rational    = regexp.MustCompile(`-?\d+/\d+`)
	sixDecimals = regexp.MustCompile(`(-?\d+\.\d{6})\b`)
)

// maxMessage bounds a validation message, which can quote a long value.
const maxMessage = 300

// validationMessage turns a validation error into one line naming the
// offending parameter: `parameter "todos[].status": enum: ...`,
// `missing parameter "path"`, `unknown parameter "cwd"`.
func validationMessage(err error) string {
	// The library wraps the failed keyword's error once per schema it
	// descends into: "validating /properties/a: ...".
	var paths []string
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			break
		}
		if p, ok := strings.CutPrefix(strings.TrimSuffix(err.Error(), inner.Error()), "validating "); ok {
			paths = append(paths, strings.TrimSuffix(p, ": "))
		}
		err = inner
	}
	field := fieldName(paths)
	leaf := oneLine(schemaList.ReplaceAllString(err.Error(), " against any of the allowed schemas"))
	keyword, _, _ := strings.Cut(leaf, ":")
	var msg string
	switch {
	case strings.HasPrefix(leaf, "required: missing properties: "):
		msg = "missing " + parameters(field, leaf)
	case strings.HasPrefix(leaf, "unexpected additional properties "):
		msg = "unknown " + parameters(field, leaf)
	default:
		switch keyword {
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
			leaf = plainNumbers(leaf)
		}
		msg = leaf
		if field != "" {
			msg = fmt.Sprintf("parameter %q: %s", field, leaf)
		}
	}
	if r := []rune(msg); len(r) > maxMessage {
		msg = string(r[:maxMessage]) + "…"
	}
	return msg
}

// fieldName turns the schema locations of a validation error into the
// parameter's name: /properties/todos/items/properties/status is
// todos[].status. A location that does not extend the previous one (a
// $ref followed) adds nothing.
func fieldName(paths []string) string {
	var name strings.Builder
	base := ""
	for _, p := range paths {
		if p == "root" {
			continue
		}
		rest, ok := strings.CutPrefix(p, base)
		base = p
		if !ok || rest != "" && rest[0] != '/' {
			continue
		}
		segs := strings.Split(strings.TrimPrefix(rest, "/"), "/")
		for i := 0; i < len(segs); i++ {
			switch segs[i] {
			case "properties":
				if i+1 < len(segs) {
					i++
					if name.Len() > 0 {
						name.WriteByte('.')
					}
					name.WriteString(strings.NewReplacer("~1", "/", "~0", "~").Replace(segs[i]))
				}
			case "items":
				name.WriteString("[]")
			case "$defs", "definitions", "patternProperties", "dependentSchemas":
				i++ // a name that is no parameter's
			}
		}
	}
	return name.String()
}

// parameters names the properties quoted in leaf, below field.
func parameters(field, leaf string) string {
	var names []string
	for _, q := range quoted.FindAllString(leaf, -1) {
		n, err := strconv.Unquote(q)
		if err != nil {
			n = q
		}
		if field != "" {
			n = field + "." + n
		}
		names = append(names, strconv.Quote(n))
	}
	if len(names) == 1 {
		return "parameter " + names[0]
	}
	// The library lists the names in map order; sorted, the message is the
	// same for the same arguments.
	slices.Sort(names)
	return "parameters " + strings.Join(names, ", ")
}

// plainNumbers writes the library's numbers (301/1, 300.000000) as the
// model wrote them (301, 300).
func plainNumbers(s string) string {
	s = rational.ReplaceAllStringFunc(s, func(r string) string {
		x, ok := new(big.Rat).SetString(r)
		if !ok {
			return r
		}
		if x.IsInt() {
			return x.Num().String()
		}
		f, _ := x.Float64()
		return strconv.FormatFloat(f, 'g', -1, 64)
	})
	return sixDecimals.ReplaceAllStringFunc(s, func(d string) string {
		f, err := strconv.ParseFloat(d, 64)
		if err != nil {
			return d
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	})
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
