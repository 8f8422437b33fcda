// Package todo is SetTodoList: the model's todo list for the session, kept
// in the plugin's session state dir so that it survives a plugin restart.
package todo

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

//go:embed set_todo_list.md
var descriptions embed.FS

// stateFile is the list's file in the session state dir.
const stateFile = "todos.json"

// The statuses of a todo item.
const (
	statusPending    = "pending"
	statusInProgress = "in_progress"
	statusDone       = "done"
)

// Todo is one item of the list.
type Todo struct {
	Title  string `json:"title" minLength:"1" jsonschema:"What to do, in a few words."`
	Status string `json:"status" enum:"pending,in_progress,done" jsonschema:"pending, in_progress or done."`
}

// Params are SetTodoList's arguments.
type Params struct {
	Todos []Todo `json:"todos,omitempty" jsonschema:"The whole new list, replacing the old one. Omit it to read the current list."`
}

// TodoBlock is the "todo" display block.
type TodoBlock struct {
	Items []Todo `json:"items"`
}

// SetTodoList replaces or reads the session's todo list.
type SetTodoList struct {
	path string
	mu   sync.Mutex
}

// NewSetTodoList constructs the tool from the host's Session.
func NewSetTodoList(s pluginsdk.Session) (*SetTodoList, error) {
	if s.StateDir() == "" {
		return nil, errors.New("the host gave no session state directory to keep the list in")
	}
	return &SetTodoList{path: filepath.Join(s.StateDir(), stateFile)}, nil
}

// Call replaces the list when todos is given, else reads it.
func (t *SetTodoList) Call(_ context.Context, p Params) pluginsdk.Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.Todos == nil {
		todos, err := t.load()
		if err != nil {
			return pluginsdk.Error(fmt.Sprintf("Cannot read the todo list: %v", err)).WithBrief("Read failed")
		}
		return render(todos, "")
	}
	for i, td := range p.Todos {
		if strings.TrimSpace(td.Title) == "" {
			return pluginsdk.Error(fmt.Sprintf("Item %d has no title.", i+1)).WithBrief("Invalid todo")
		}
		switch td.Status {
		case statusPending, statusInProgress, statusDone:
		default:
			return pluginsdk.Error(fmt.Sprintf("Item %d has status %q; use pending, in_progress or done.", i+1, td.Status)).
				WithBrief("Invalid todo")
		}
	}
	if err := t.save(p.Todos); err != nil {
		return pluginsdk.Error(fmt.Sprintf("Cannot save the todo list: %v", err)).WithBrief("Save failed")
	}
	return render(p.Todos, "Todo list updated.")
}

// render shows the list to the model and, as a "todo" block, to the user.
func render(todos []Todo, message string) pluginsdk.Result {
	if len(todos) == 0 {
		msg := "The todo list is empty."
		if message != "" {
			msg = "Todo list cleared."
		}
		return pluginsdk.Ok("").WithMessage(msg).WithDisplay(pluginsdk.DisplayBlock{Kind: "todo", Data: TodoBlock{Items: []Todo{}}})
	}
	var b strings.Builder
	done := 0
	for i, td := range todos {
		fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, td.Status, td.Title)
		if td.Status == statusDone {
			done++
		}
	}
	return pluginsdk.Ok(b.String()).WithMessage(message).
		WithBrief(fmt.Sprintf("%d/%d done", done, len(todos))).
		WithDisplay(pluginsdk.DisplayBlock{Kind: "todo", Data: TodoBlock{Items: todos}})
}

func (t *SetTodoList) load() ([]Todo, error) {
	b, err := os.ReadFile(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var todos []Todo
	if err := json.Unmarshal(b, &todos); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", t.path, err)
	}
	return todos, nil
}

// save writes the list atomically (temporary file and rename).
func (t *SetTodoList) save(todos []Todo) error {
	b, err := json.MarshalIndent(todos, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(t.path), stateFile+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), t.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// definitions are the tools of this plugin.
func definitions() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[Params]("SetTodoList", "Update or read the todo list.", NewSetTodoList, pluginsdk.ReadOnly(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "set_todo_list.md", nil)),
	}
}

// Tools are the tools this plugin serves, to the host as a built-in or as
// its own binary (cmd/kosong-plugin-todo).
func Tools() []pluginsdk.Definition { return definitions() }
