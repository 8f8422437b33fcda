package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// sessions lists the sessions of the conversation's folder, newest
// first, with their first prompts.
func (e *slashEnv) sessions() string {
	list, err := session.List(session.Options{}, e.conv.WorkDir())
	if err != nil {
		return "error: " + err.Error()
	}
	if len(list) == 0 {
		return "no saved sessions yet"
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, s := range list {
		mark := ""
		if s.ID == e.conv.ID() {
			mark = "  (this session)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s\n", s.Updated.Local().Format("2006-01-02 15:04"), s.ID, orDash(clip(s.FirstPrompt, 50)), mark)
	}
	tw.Flush()
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
