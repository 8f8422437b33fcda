package wire

import (
	"encoding/json"
	"testing"
)

func TestCheckSchema(t *testing.T) {
	tests := []struct {
		schema string
		ok     bool
	}{
		{`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`, true},
		{`{}`, true},
		{`{"type":"nope"}`, false},
		{`{"type":"object","properties":{"a":{"type":5}}}`, false},
		{`{"type":"object","required":"key"}`, false},
		{`[1]`, false},
	}
	for _, tt := range tests {
		err := checkSchema(json.RawMessage(tt.schema))
		if (err == nil) != tt.ok {
			t.Errorf("%s: err %v, want ok %v", tt.schema, err, tt.ok)
		}
		if err != nil {
			t.Logf("%s: %v", tt.schema, err)
		}
	}
}
