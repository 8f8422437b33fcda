package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzLoadHistory: loading a history file never panics; an error is one
// line naming the file; a history that loads saves and loads back the same.
func FuzzLoadHistory(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":[{"type":"text","text":"hi"}]}` + "\n" +
			`{"role":"assistant","content":[{"type":"text","text":"I'll look."}],"tool_calls":[{"id":"c1","name":"Shell","arguments":"{\"command\":\"ls\"}"}],"reasoning":"hm","reasoning_signature":"{\"anthropic\":[]}"}` + "\n" +
			`{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"a\nb"},{"type":"image","image_url":"data:image/png;base64,iVBORw0KGgo="}],"is_error":true}` + "\n",
		"\n\n   \n",
		`{"role":"user"}` + "\n" + `{"role":` + "\n",
		`{"role":"user","content":"not a list"}`,
		`[1,2]`,
		`null`,
		"{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}",
		`{"role":"user"} {"role":"user"}`,
		"",
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "in.jsonl")
	s := &Session{ID: "fuzz", Dir: dir}
	f.Fuzz(func(t *testing.T, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		msgs, err := LoadHistory(path)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "session: "+path) || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q", msg)
			}
			return
		}
		if err := s.SaveHistory(msgs); err != nil {
			t.Fatal(err)
		}
		again, err := LoadHistory(s.HistoryPath())
		if err != nil {
			t.Fatalf("a saved history does not load: %v", err)
		}
		a, _ := json.Marshal(msgs)
		b, _ := json.Marshal(again)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("saved and loaded back:\n%s\nis\n%s", a, b)
		}
	})
}
