package toolset

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles a tool's parameters schema.
func compileSchema(tool string, schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("tool %s: parameters schema is not JSON: %w", tool, err)
	}
	c := jsonschema.NewCompiler()
	url := "kosong:///tools/" + tool + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %s: parameters schema: %w", tool, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %s: parameters schema: %s", tool, oneLine(err.Error()))
	}
	return s, nil
}

// validationMessage turns a validation error into one line naming each
// offending field.
func validationMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return oneLine(err.Error())
	}
	var msgs []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil || len(u.Errors) > 0 {
			continue
		}
		text := u.Error.String()
		if strings.HasPrefix(text, "validation failed") {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			msgs = append(msgs, text)
		} else {
			msgs = append(msgs, fmt.Sprintf("at %s: %s", loc, text))
		}
	}
	if len(msgs) == 0 {
		return oneLine(err.Error())
	}
	return strings.Join(msgs, "; ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
