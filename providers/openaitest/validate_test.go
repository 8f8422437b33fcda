package openaitest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/providers/openaitest"
)

func msg(role, id string, calls ...string) openaitest.Message {
	m := openaitest.Message{Role: role, ToolCallID: id, Content: json.RawMessage(`"x"`)}
	for _, c := range calls {
		tc := openaitest.MessageToolCall{ID: c, Type: "function"}
		tc.Function.Name = "Shell"
		m.ToolCalls = append(m.ToolCalls, tc)
	}
	return m
}

func TestValidateHistory(t *testing.T) {
	tests := []struct {
		name string
		msgs []openaitest.Message
		want string // "" for valid
	}{
		{"no tools", []openaitest.Message{msg("user", ""), msg("assistant", "")}, ""},
		{"paired", []openaitest.Message{msg("user", ""), msg("assistant", "", "a", "b"), msg("tool", "b"), msg("tool", "a"), msg("user", "")}, ""},
		{"missing result", []openaitest.Message{msg("user", ""), msg("assistant", "", "a", "b"), msg("tool", "a"), msg("user", "")}, "these had none: b"},
		{"missing at the end", []openaitest.Message{msg("assistant", "", "a")}, "these had none: a"},
		{"two results", []openaitest.Message{msg("assistant", "", "a"), msg("tool", "a"), msg("tool", "a")}, `tool_call_id "a" answers no open call`},
		{"result without call", []openaitest.Message{msg("user", ""), msg("tool", "z")}, `(tool_call_id "z") must answer`},
		{"result after a user message", []openaitest.Message{msg("assistant", "", "a"), msg("user", ""), msg("tool", "a")}, "these had none: a"},
		{"duplicate id", []openaitest.Message{msg("assistant", "", "a", "a"), msg("tool", "a")}, "used twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := openaitest.ValidateHistory(tt.msgs)
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestValidatingServerRejects(t *testing.T) {
	srv := openaitest.NewValidatingServer(t, openaitest.Response{Text: []string{"ok"}})
	post := func(body string) (int, string) {
		resp, err := http.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error.Message
	}
	bad := `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"Shell","arguments":"{}"}}]},{"role":"user","content":"next"}]}`
	if code, m := post(bad); code != http.StatusBadRequest || !strings.Contains(m, "c1") {
		t.Fatalf("bad history: %d %q", code, m)
	}
	if n := len(srv.Requests()); n != 0 || srv.Pending() != 1 {
		t.Fatalf("a rejected request was recorded (%d) or took a response (%d left)", n, srv.Pending())
	}
	good := `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	if code, _ := post(good); code != http.StatusOK {
		t.Fatalf("good history: %d", code)
	}
}
