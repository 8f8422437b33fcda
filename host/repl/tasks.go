package repl

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// BackgroundTask is a running background task (the shell plugin's Shell
// run_in_background), as the terminal lists it.
type BackgroundTask struct {
	ID, Status, Description, Command string
}

// tasksTimeout bounds asking for the running tasks after a turn.
const tasksTimeout = 5 * time.Second

func (t BackgroundTask) label() string {
	what := t.Description
	if what == "" {
		what = t.Command
	}
	return fmt.Sprintf("%s (%s)", t.ID, what)
}

// runningTasks asks Commands.Tasks; nil where it is not set or fails.
func (r *REPL) runningTasks(ctx context.Context) ([]BackgroundTask, error) {
	if r.cfg.Commands.Tasks == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, tasksTimeout)
	defer cancel()
	return r.cfg.Commands.Tasks(ctx)
}

// tasksStatus is the status line after a turn while background tasks run.
func (r *REPL) tasksStatus() {
	list, err := r.runningTasks(context.Background())
	if err != nil || len(list) == 0 {
		return
	}
	labels := make([]string, len(list))
	for i, t := range list {
		labels[i] = t.label()
	}
	noun := "tasks"
	if len(list) == 1 {
		noun = "task"
	}
	r.say("%d background %s running: %s (/tasks)", len(list), noun, strings.Join(labels, ", "))
}

func (r *REPL) cmdTasks(ctx context.Context, _ string) bool {
	if r.cfg.Commands.Tasks == nil {
		r.say("/tasks is not available in this run (the agent has no TaskList tool)")
		return false
	}
	list, err := r.runningTasks(ctx)
	switch {
	case err != nil:
		r.say("error: listing the background tasks: %v", err)
	case len(list) == 0:
		r.say("No background task is running.")
	default:
		var b strings.Builder
		for _, t := range list {
			fmt.Fprintf(&b, "%s  %s  %s\n", t.ID, t.Status, t.Command)
			if t.Description != "" {
				fmt.Fprintf(&b, "    %s\n", t.Description)
			}
		}
		b.WriteString("(TaskOutput reads a task's output, TaskStop stops it: ask the agent)")
		r.say("%s", b.String())
	}
	return false
}
