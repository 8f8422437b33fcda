package pluginsdk

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type searchOptions struct {
	Depth  int    `json:"depth,omitempty" default:"2" minimum:"1" jsonschema:"How deep to search, in directories."`
	Follow bool   `json:"follow,omitempty" default:"true"`
	Order  string `json:"order,omitempty" enum:"name,size" default:"name"`
}

type filter struct {
	Name string `json:"name" minLength:"1" maxLength:"64" pattern:"^[a-z]+$"`
}

// paging is embedded: its fields are properties of the struct embedding it.
type paging struct {
	Page int `json:"page,omitempty" default:"1" minimum:"1"`
}

type searchParams struct {
	paging
	Path    string         `json:"path" minLength:"1" jsonschema:"The file, absolute or relative. Commas, and more, are kept."`
	Limit   int            `json:"limit,omitempty" default:"250" minimum:"0" maximum:"1000" exclusiveMaximum:"1001" exclusiveMinimum:"-1"`
	Mode    string         `json:"mode,omitempty" enum:"files,content,count" default:"files"`
	Score   float64        `json:"score,omitempty" default:"0.5"`
	Kinds   []string       `json:"kinds,omitempty" enum:"go,md" minItems:"1" maxItems:"2"`
	Since   string         `json:"since,omitempty" format:"date-time"`
	Options searchOptions  `json:"options,omitzero"`
	Filters []filter       `json:"filters,omitempty"`
	Extra   *searchOptions `json:"extra,omitempty"`
	Skip    string         `json:"-"`
	hidden  string
}

func TestSchemaFromStruct(t *testing.T) {
	s, err := schemaFor[searchParams]()
	if err != nil {
		t.Fatal(err)
	}
	options := `{"type":"object","properties":{
		"depth":{"type":"integer","description":"How deep to search, in directories.","default":2,"minimum":1},
		"follow":{"type":"boolean","default":true},
		"order":{"type":"string","default":"name","enum":["name","size"]}},
		"additionalProperties":false}`
	want := `{"type":"object","properties":{
		"path":{"type":"string","description":"The file, absolute or relative. Commas, and more, are kept.","minLength":1},
		"limit":{"type":"integer","default":250,"minimum":0,"maximum":1000,"exclusiveMinimum":-1,"exclusiveMaximum":1001},
		"mode":{"type":"string","default":"files","enum":["files","content","count"]},
		"score":{"type":"number","default":0.5},
		"kinds":{"type":"array","items":{"type":"string","enum":["go","md"]},"minItems":1,"maxItems":2},
		"since":{"type":"string","format":"date-time"},
		"options":` + options + `,
		"filters":{"type":"array","items":{"type":"object","properties":{
			"name":{"type":"string","minLength":1,"maxLength":64,"pattern":"^[a-z]+$"}},
			"required":["name"],"additionalProperties":false}},
		"extra":` + strings.Replace(options, `"type":"object"`, `"type":["null","object"]`, 1) + `,
		"page":{"type":"integer","default":1,"minimum":1}},
		"required":["path"],"additionalProperties":false}`
	var got, exp any
	if err := json.Unmarshal(s.raw, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("schema:\n%s\nwant:\n%s", s.raw, want)
	}
	// The description keeps its commas (generators that read options from
	// the tag cut it at the first one).
	if !strings.Contains(string(s.raw), `"The file, absolute or relative. Commas, and more, are kept."`) {
		t.Errorf("description cut: %s", s.raw)
	}
}

func TestSchemaTagErrors(t *testing.T) {
	type oldDescription struct {
		A string `json:"a" jsonschema:"description=The a."`
	}
	type invopopDescription struct {
		A string `json:"a" jsonschema_description:"The a."`
	}
	type notNumber struct {
		A int `json:"a" minimum:"one"`
	}
	type notCount struct {
		A string `json:"a" minLength:"-1"`
	}
	type badPattern struct {
		A string `json:"a" pattern:"("`
	}
	type defaultNotJSON struct {
		A int `json:"a,omitempty" default:"sixty"`
	}
	type defaultOutOfRange struct {
		A int `json:"a,omitempty" default:"0" minimum:"1"`
	}
	type defaultNotInEnum struct {
		A string `json:"a,omitempty" enum:"x,y" default:"z"`
	}
	type defaultRequired struct {
		A int `json:"a" default:"1"`
	}
	type inner struct {
		B int `json:"b,omitempty" default:"1"`
	}
	type defaultInElements struct {
		A []inner `json:"a,omitempty"`
	}
	type nested struct {
		In struct {
			B int `json:"b" maximum:"x"`
		} `json:"in"`
	}
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"old description syntax", func() error { _, err := schemaFor[oldDescription](); return err }, `tag must not begin with 'WORD='`},
		{"tag of another generator", func() error { _, err := schemaFor[invopopDescription](); return err }, "field A: tag jsonschema_description is not read"},
		{"minimum not a number", func() error { _, err := schemaFor[notNumber](); return err }, `field A: tag minimum: "one" is not a number`},
		{"negative length", func() error { _, err := schemaFor[notCount](); return err }, `field A: tag minLength: "-1" is not a count`},
		{"bad pattern", func() error { _, err := schemaFor[badPattern](); return err }, "field A: tag pattern: error parsing regexp"},
		{"default not JSON", func() error { _, err := schemaFor[defaultNotJSON](); return err }, `field A: tag default: "sixty" is not JSON`},
		{"default out of range", func() error { _, err := schemaFor[defaultOutOfRange](); return err }, "a default does not fit its property: validating /properties/a: minimum: 0/1 is less than 1"},
		{"default not in enum", func() error { _, err := schemaFor[defaultNotInEnum](); return err }, "enum: z does not equal any of: [x y]"},
		{"default on a required property", func() error { _, err := schemaFor[defaultRequired](); return err }, `field A: default "1" on a required property`},
		{"default in list elements", func() error { _, err := schemaFor[defaultInElements](); return err }, `field A: field B: default "1" inside the elements of a list or map`},
		{"nested field", func() error { _, err := schemaFor[nested](); return err }, `field In: field B: tag maximum: "x" is not a number`},
		{"through NewTool", func() error {
			return checkDefinitions([]Definition{NewTool[notNumber]("A", "d", func() (HandlerFunc[notNumber], error) {
				return func(context.Context, notNumber) Result { return Ok("") }, nil
			})})
		}, `tool A: parameters type pluginsdk.notNumber: field A: tag minimum: "one" is not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.err(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestArgumentsGetDefaults(t *testing.T) {
	var got searchParams
	def := NewTool[searchParams]("Search", "d", func() (HandlerFunc[searchParams], error) {
		return func(_ context.Context, p searchParams) Result { got = p; return Ok("") }, nil
	})
	call, err := def.construct(nil)
	if err != nil {
		t.Fatal(err)
	}
	// An absent object whose properties have defaults is created with
	// them, a pointer too.
	defaults := searchOptions{Depth: 2, Follow: true, Order: "name"}
	tests := []struct {
		args string
		want searchParams
	}{
		{``, searchParams{paging: paging{1}, Limit: 250, Mode: "files", Score: 0.5, Options: defaults, Extra: &defaults}},
		{`null`, searchParams{paging: paging{1}, Limit: 250, Mode: "files", Score: 0.5, Options: defaults, Extra: &defaults}},
		{`{"path":"a","limit":0,"mode":"count","page":3}`, searchParams{paging: paging{3}, Path: "a", Mode: "count", Score: 0.5, Options: defaults, Extra: &defaults}},
		{`{"options":{"depth":5},"extra":{"order":"size"}}`, searchParams{paging: paging{1}, Limit: 250, Mode: "files", Score: 0.5,
			Options: searchOptions{Depth: 5, Follow: true, Order: "name"}, Extra: &searchOptions{Depth: 2, Follow: true, Order: "size"}}},
		{`{"options":{"follow":false,"order":"size"},"extra":null}`, searchParams{paging: paging{1}, Limit: 250, Mode: "files", Score: 0.5,
			Options: searchOptions{Depth: 2, Order: "size"}}},
		{`{"filters":[{"name":"x"}],"limit":12345678901234567}`, searchParams{paging: paging{1}, Limit: 12345678901234567, Mode: "files", Score: 0.5,
			Options: defaults, Filters: []filter{{Name: "x"}}, Extra: &defaults}},
	}
	for _, tt := range tests {
		got = searchParams{}
		if r := call(context.Background(), json.RawMessage(tt.args)); r.Kind != KindOk {
			t.Errorf("call(%s) = %+v", tt.args, r)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("call(%s) got %+v, want %+v", tt.args, got, tt.want)
		}
	}
	r := call(context.Background(), json.RawMessage(`{"limit":`))
	if r.Kind == KindOk || !strings.Contains(r.Message, "Error parsing JSON arguments") {
		t.Errorf("bad JSON: %+v", r)
	}
}
