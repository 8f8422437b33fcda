package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kosong-host/kosong-host/host/conversation"
	"github.com/kosong-host/kosong-host/host/repl"
	"github.com/kosong-host/kosong-host/host/session"
)

// slashEnv is what the interactive session's slash commands work on.
type slashEnv struct {
	conv *conversation.Conversation
}

// slashCommands is the run's side of /tools, /sessions and /tasks (/clear,
// /model and /compact are the conversation's own).
func slashCommands(conv *conversation.Conversation) repl.Commands {
	e := &slashEnv{conv: conv}
	return repl.Commands{Tools: e.tools, Sessions: e.sessions, Tasks: e.tasks}
}

func (e *slashEnv) tools() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATUS\tSOURCE")
	for _, st := range e.conv.Agent().Statuses() {
		status := st.Status
		if st.Reason != "" {
			status += ": " + st.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", st.Name, status, st.Source)
	}
	tw.Flush()
	return b.String()
}

func (e *slashEnv) sessions() string {
	root, err := session.Root(os.Getenv)
	if err != nil {
		return "error: " + err.Error()
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return "error: " + err.Error()
	}
	type row struct{ id, when string }
	var rows []row
	for _, en := range entries {
		if !en.IsDir() {
			continue
		}
		info, err := os.Stat(filepath.Join(root, en.Name(), session.HistoryFile))
		if err != nil {
			continue
		}
		rows = append(rows, row{en.Name(), info.ModTime().Format("2006-01-02 15:04")})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].when > rows[j].when })
	if len(rows) == 0 {
		return "no saved sessions yet"
	}
	var b strings.Builder
	for _, r := range rows {
		mark := ""
		if r.id == e.conv.ID() {
			mark = "  (this session)"
		}
		fmt.Fprintf(&b, "%s  %s%s\n", r.when, r.id, mark)
	}
	b.WriteString("resume one with: kosong-host run --resume ID")
	return b.String()
}

// tasks lists the shell plugin's running background tasks by calling its
// TaskList tool (read-only, asks no approval) directly, not as a model's
// call: no hooks, rules or events. What it lists is the plugin's own
// account, so tasks that ended on their own are gone from it.
func (e *slashEnv) tasks(ctx context.Context) ([]repl.BackgroundTask, error) {
	t, ok := e.conv.Toolset().Find("TaskList")
	if !ok {
		return nil, errors.New("the agent has no TaskList tool")
	}
	res := t.Call(ctx, "kosong-host-tasks", json.RawMessage(`{"active_only":true,"limit":100}`))
	if res.IsError() {
		return nil, fmt.Errorf("TaskList: %s", res.Message)
	}
	return parseTaskList(res.OutputText()), nil
}

// parseTaskList reads TaskList's output: blocks of `key: value` lines, one
// block a task, each starting with task_id.
func parseTaskList(out string) []repl.BackgroundTask {
	var list []repl.BackgroundTask
	for _, line := range strings.Split(out, "\n") {
		key, value, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		if key == "task_id" {
			list = append(list, repl.BackgroundTask{ID: value})
			continue
		}
		if len(list) == 0 {
			continue
		}
		t := &list[len(list)-1]
		switch key {
		case "status":
			t.Status = value
		case "description":
			t.Description = value
		case "command":
			t.Command = value
		}
	}
	return list
}
