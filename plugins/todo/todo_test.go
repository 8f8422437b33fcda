package todo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

func TestSetTodoList(t *testing.T) {
	state := t.TempDir()
	h := plugintest.New(t, plugintest.Options{StateDir: state}, definitions()...)
	steps := []struct {
		name    string
		args    string
		kind    pluginsdk.ResultKind
		output  string
		message string
		items   string // the todo block's items, as JSON
	}{
		{"read before any write", `{}`, pluginsdk.KindOk, "", "The todo list is empty.", `[]`},
		{"set", `{"todos": [{"title": "Read the code", "status": "done"}, {"title": "Fix the bug", "status": "in_progress"}, {"title": "Écrire les tests 🙂", "status": "pending"}]}`,
			pluginsdk.KindOk, "1. [done] Read the code\n2. [in_progress] Fix the bug\n3. [pending] Écrire les tests 🙂\n", "Todo list updated.",
			`[{"title":"Read the code","status":"done"},{"title":"Fix the bug","status":"in_progress"},{"title":"Écrire les tests 🙂","status":"pending"}]`},
		{"read back", ``, pluginsdk.KindOk, "1. [done] Read the code\n2. [in_progress] Fix the bug\n3. [pending] Écrire les tests 🙂\n", "",
			`[{"title":"Read the code","status":"done"},{"title":"Fix the bug","status":"in_progress"},{"title":"Écrire les tests 🙂","status":"pending"}]`},
		{"invalid status leaves the list", `{"todos": [{"title": "x", "status": "started"}]}`, pluginsdk.KindError, "",
			`Error validating JSON arguments: parameter "todos[].status": enum: started does not equal any of: [pending in_progress done]`, ""},
		{"empty title", `{"todos": [{"title": " ", "status": "done"}]}`, pluginsdk.KindError, "", "Item 1 has no title.", ""},
		{"still there", `{}`, pluginsdk.KindOk, "1. [done] Read the code\n2. [in_progress] Fix the bug\n3. [pending] Écrire les tests 🙂\n", "", ""},
		{"clear", `{"todos": []}`, pluginsdk.KindOk, "", "Todo list cleared.", `[]`},
		{"cleared", `{}`, pluginsdk.KindOk, "", "The todo list is empty.", `[]`},
	}
	for _, st := range steps {
		got := h.MustCall(t, "SetTodoList", st.args)
		if got.Kind != st.kind || got.Text() != st.output || got.Message != st.message {
			t.Fatalf("%s: got %+v", st.name, got)
		}
		if st.items != "" {
			if len(got.Display) != 1 || got.Display[0].Kind != "todo" {
				t.Fatalf("%s: display = %v", st.name, got.Display)
			}
			var block struct{ Items json.RawMessage }
			if err := json.Unmarshal(got.Display[0].Data.(json.RawMessage), &block); err != nil || string(block.Items) != st.items {
				t.Fatalf("%s: todo block = %s (%v)", st.name, got.Display[0].Data, err)
			}
		}
	}
}

// TestSurvivesRestart: a new plugin instance with the same state dir (a
// plugin restart) sees the list.
func TestSurvivesRestart(t *testing.T) {
	state := t.TempDir()
	first := plugintest.New(t, plugintest.Options{StateDir: state}, definitions()...)
	if got := first.MustCall(t, "SetTodoList", `{"todos": [{"title": "Ship it", "status": "in_progress"}]}`); got.Kind != pluginsdk.KindOk {
		t.Fatalf("set: %+v", got)
	}
	second := plugintest.New(t, plugintest.Options{StateDir: state}, definitions()...)
	if got := second.MustCall(t, "SetTodoList", `{}`); got.Text() != "1. [in_progress] Ship it\n" {
		t.Fatalf("after restart: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(state, "todos.json")); err != nil {
		t.Fatal(err)
	}
	other := plugintest.New(t, plugintest.Options{}, definitions()...)
	if got := other.MustCall(t, "SetTodoList", `{}`); got.Text() != "" {
		t.Fatalf("another session sees the list: %+v", got)
	}
}

func TestCorruptState(t *testing.T) {
	state := t.TempDir()
	if err := os.WriteFile(filepath.Join(state, "todos.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := plugintest.New(t, plugintest.Options{StateDir: state}, definitions()...)
	if got := h.MustCall(t, "SetTodoList", `{}`); got.Kind != pluginsdk.KindError {
		t.Fatalf("got %+v", got)
	}
	// Setting a new list repairs it.
	if got := h.MustCall(t, "SetTodoList", `{"todos": [{"title": "a", "status": "done"}]}`); got.Kind != pluginsdk.KindOk {
		t.Fatalf("got %+v", got)
	}
}
