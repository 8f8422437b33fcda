package arguments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzSchema is a tool schema with the keywords tool schemas use: required,
// types, bounds, enums, defaults, nested objects in arrays, no extra keys.
const fuzzSchema = `{"type":"object","properties":{
 "command":{"type":"string","minLength":1,"maxLength":40},
 "timeout":{"type":"integer","minimum":1,"maximum":300,"default":60},
 "mode":{"type":"string","enum":["fast","slow"],"default":"fast"},
 "ratio":{"type":"number","exclusiveMinimum":0,"multipleOf":0.5},
 "todos":{"type":"array","maxItems":3,"items":{"type":"object","properties":{
   "title":{"type":"string"},"status":{"type":"string","enum":["pending","done"],"default":"pending"}},
   "required":["title"],"additionalProperties":false}}},
 "required":["command"],"additionalProperties":false}`

// within fails the test if fn takes longer than a validation ever should.
func within(t *testing.T, args string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("no answer after 5s for %q", args)
	}
}

// checkRejection: a rejection is an *Error with a one-line, bounded message.
func checkRejection(t *testing.T, bad error) {
	t.Helper()
	var e *Error
	if !errors.As(bad, &e) {
		t.Fatalf("rejection %T %v", bad, bad)
	}
	msg := bad.Error()
	if strings.ContainsAny(msg, "\n\r") || utf8.RuneCountInString(msg) > maxMessage+60 {
		t.Fatalf("rejection %q", msg)
	}
	prefix := map[Kind]string{Unparsable: "Error parsing JSON arguments: ", Invalid: "Error validating JSON arguments: "}[e.Kind]
	if prefix == "" || !strings.HasPrefix(msg, prefix) {
		t.Fatalf("rejection of kind %d: %q", e.Kind, msg)
	}
}

// FuzzValidateArguments: arguments are accepted only when they satisfy
// fuzzSchema, checked here by hand on what the tool would receive (with
// defaults filled in); that is accepted again unchanged; a rejection is one
// line.
func FuzzValidateArguments(f *testing.F) {
	for _, s := range []string{
		`{"command":"ls"}`,
		`{"command":"ls","timeout":5,"mode":"slow","ratio":1.5}`,
		`{"command":"ls","todos":[{"title":"a"},{"title":"b","status":"done"}]}`,
		`{"command":"","timeout":0}`,
		`{"command":"ls","timeout":301}`,
		`{"command":"ls","timeout":5.0}`,
		`{"command":"ls","timeout":5.5}`,
		`{"command":"ls","mode":"medium"}`,
		`{"command":"ls","todos":[{"title":"a","extra":1}]}`,
		`{"command":"ls","todos":[{},{},{},{}]}`,
		`{"command":"ls","cwd":"/"}`,
		`{"command":1}`,
		`{"command":"ls","command":"rm"}`,
		`{"command":"ls","ratio":0}`,
		`{"command":"ls","ratio":0.25}`,
		`{"command":"ls","timeout":1e2}`,
		`{"command":"ls","timeout":100000000000000000000000}`,
		`{"command":"ls"} {}`,
		`[]`, `null`, `"x"`, ``, `{`,
	} {
		f.Add(s)
	}
	schema, err := Compile("Fuzz", []byte(fuzzSchema))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string) {
		var out json.RawMessage
		var bad error
		within(t, args, func() { out, bad = schema.Check([]byte(args)) })
		if bad != nil {
			checkRejection(t, bad)
			return
		}
		if why := violation(out); why != "" {
			t.Fatalf("accepted %q as %s, which the schema forbids: %s", args, out, why)
		}
		again, bad := schema.Check(out)
		if bad != nil || !bytes.Equal(again, out) {
			t.Fatalf("%s, accepted, is now %s / %+v", out, again, bad)
		}
	})
}

// violation says how args break fuzzSchema, or "" when they do not.
func violation(args []byte) string {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return "not an object"
	}
	for k := range m {
		switch k {
		case "command", "timeout", "mode", "ratio", "todos":
		default:
			return "unknown key " + k
		}
	}
	cmd, ok := m["command"].(string)
	if n := utf8.RuneCountInString(cmd); !ok || n < 1 || n > 40 {
		return "command"
	}
	if v, ok := m["timeout"]; !ok {
		return "timeout default missing"
	} else if r := rat(v); r == nil || !r.IsInt() || r.Cmp(big.NewRat(1, 1)) < 0 || r.Cmp(big.NewRat(300, 1)) > 0 {
		return "timeout"
	}
	if mode, _ := m["mode"].(string); mode != "fast" && mode != "slow" {
		return "mode"
	}
	if v, ok := m["ratio"]; ok {
		r := rat(v)
		if r == nil || r.Sign() <= 0 || !new(big.Rat).Mul(r, big.NewRat(2, 1)).IsInt() {
			return "ratio"
		}
	}
	if v, ok := m["todos"]; ok {
		todos, ok := v.([]any)
		if !ok || len(todos) > 3 {
			return "todos"
		}
		for _, td := range todos {
			o, ok := td.(map[string]any)
			if !ok || len(o) > 2 {
				return "todo"
			}
			if _, ok := o["title"].(string); !ok {
				return "todo title"
			}
			if s, ok := o["status"]; ok && s != "pending" && s != "done" { // optional: defaults are not filled in array items
				return "todo status"
			}
			for k := range o {
				if k != "title" && k != "status" {
					return "todo key " + k
				}
			}
		}
	}
	return ""
}

func rat(v any) *big.Rat {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return nil
	}
	return r
}

// FuzzCompileSchema: any parameters schema compiles or is refused with a
// one-line error naming the tool, and arguments checked against one that
// compiles never panic; what is accepted is accepted again unchanged.
func FuzzCompileSchema(f *testing.F) {
	f.Add(fuzzSchema, `{"command":"ls"}`)
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"integer","default":3}}}`, `{}`)
	f.Add(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"type":["string","null"]}},"definitions":{"d":{}}}`, `{"p":null}`)
	f.Add(`{"type":"object","properties":{"o":{"type":"object","properties":{"n":{"default":{"k":1}}}}}}`, `{"o":{}}`)
	f.Add(`{"anyOf":[{"required":["a"]},{"required":["b"]}],"patternProperties":{"^x":{"type":"boolean"}}}`, `{"xa":true,"a":1}`)
	f.Add(`{"type":"object","properties":{"s":{"type":"string","pattern":"^(a+)+$","format":"uri"}}}`, `{"s":"aaaa"}`)
	f.Add(`{"$ref":"#"}`, `{}`)
	f.Add(`{"type":"string"}`, `"x"`)
	f.Add(`{"properties":{"a":{"default":1}},"additionalProperties":false}`, `{"b":2}`)
	f.Add(`[]`, `{}`)
	f.Add(`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"integer","default":"x"}}}}}`, `{"a":{}}`)
	f.Fuzz(func(t *testing.T, schemaText, args string) {
		var schema *Schema
		var err error
		within(t, schemaText, func() { schema, err = Compile("Fuzz", []byte(schemaText)) })
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "tool Fuzz: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("schema error %q", msg)
			}
			return
		}
		var out json.RawMessage
		var bad error
		within(t, args, func() { out, bad = schema.Check([]byte(args)) })
		if bad != nil {
			checkRejection(t, bad)
			return
		}
		if !json.Valid(out) {
			t.Fatalf("accepted %q as invalid JSON %q", args, out)
		}
		var again json.RawMessage
		within(t, string(out), func() { again, bad = schema.Check(out) })
		if bad != nil {
			t.Fatalf("%s, accepted, is now refused: %v", out, bad)
		}
		_ = again
	})
}

// TestSelfApplyingSchemaRefused: a schema that applies itself to the same
// value (found by FuzzCompileSchema: {"$ref":"#"} overflowed the stack of
// the whole host at the first call) is refused when it is compiled,
// while recursion through a nested value stays allowed.
func TestSelfApplyingSchemaRefused(t *testing.T) {
	tests := []struct {
		schema string
		loc    string // "" = accepted
	}{
		{`{"$ref":"#"}`, "#"},
		{`{"type":"object","allOf":[{"$ref":"#"}]}`, "#"},
		{`{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, "#/$defs/"},
		{`{"type":"object","properties":{"x":{"$anchor":"x","not":{"$ref":"#x"}}}}`, "#/properties/x"},
		{`{"type":"object","$defs":{"d":{"if":{"$ref":"#/$defs/d"}}}}`, "#/$defs/d"},
		{`{"type":"object","properties":{"child":{"$ref":"#"}}}`, ""},
		{`{"type":"object","$defs":{"node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},"properties":{"list":{"$ref":"#/$defs/node"}}}`, ""},
		{`{"type":"object","$defs":{"a":{"type":"string"}},"allOf":[{"$ref":"#/$defs/a"}],"anyOf":[{"$ref":"#/$defs/a"}]}`, ""},
	}
	for _, tt := range tests {
		_, err := Compile("Loop", []byte(tt.schema))
		switch {
		case tt.loc == "" && err != nil:
			t.Errorf("%s: %v", tt.schema, err)
		case tt.loc != "" && (err == nil || !strings.HasPrefix(err.Error(), "tool Loop: parameters schema: the schema at "+tt.loc) ||
			!strings.HasSuffix(err.Error(), "so no value can be validated")):
			t.Errorf("%s: %v", tt.schema, err)
		}
	}
	if _, err := Compile("Loop", []byte(`{"$ref":"#"}`)); err == nil ||
		err.Error() != "tool Loop: parameters schema: the schema at # applies itself to the same value ($ref through allOf, anyOf, oneOf, not, if, then or else without a nested property or item), so no value can be validated" {
		t.Fatalf("message: %v", err)
	}
}

// TestDefaultThatDoesNotFit: a default that breaks its own property's
// schema (found by FuzzCompileSchema) is not filled in: the tool gets the
// arguments as given, never arguments its schema forbids.
func TestDefaultThatDoesNotFit(t *testing.T) {
	schema, err := Compile("Bad", []byte(`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"integer","default":"x"}}},"n":{"type":"integer","default":2}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ args, got string }{
		{`{"a":{}}`, `{"a":{}}`},
		{`{"a":{"b":1}}`, `{"a":{"b":1},"n":2}`},
		{`{}`, `{}`}, // the default of a.b would be filled in too
	}
	for _, tt := range tests {
		got, err := schema.Check([]byte(tt.args))
		if err != nil || string(got) != tt.got {
			t.Errorf("%s: %s %v, want %s", tt.args, got, err, tt.got)
		}
	}
}

// TestParseErrorBounded: the message for arguments that do not decode is
// bounded like a validation message (found by FuzzValidateArguments: a
// number too large for a float64 was quoted whole).
func TestParseErrorBounded(t *testing.T) {
	schema, err := Compile("Shell", []byte(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = schema.Check([]byte(`{"command":"ls","timeout":2` + strings.Repeat("0", 5000) + `}`))
	msg := fmt.Sprint(err)
	if !strings.HasPrefix(msg, "Error parsing JSON arguments: json: cannot unmarshal number 2000") ||
		utf8.RuneCountInString(msg) > maxMessage+len("Error parsing JSON arguments: ")+1 || !strings.HasSuffix(msg, "…") {
		t.Fatalf("%d characters: %q", len(msg), msg)
	}
}
