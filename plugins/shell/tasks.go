package shell

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kosong-host/kosong-host/pluginsdk"
)

// Kimi's limits for background tasks.
const (
	maxRunningTasks      = 4
	maxBackgroundTimeout = 86400
	// killGrace is the wait between SIGTERM and SIGKILL when a task times
	// out or is stopped.
	killGrace = 2 * time.Second
	// outputTail is what TaskOutput shows of the log.
	outputTail = 32 << 10
	// maxOutputWait bounds TaskOutput's block timeout, in seconds.
	maxOutputWait = 3600

	stopAction = "stop background task"
)

// The statuses of a task.
const (
	statusRunning   = "running"
	statusCompleted = "completed"
	statusFailed    = "failed"
	statusKilled    = "killed"
)

// task is one background command. The shell plugin owns it: it runs in a
// process group the SDK tracks, so it dies with the plugin, which the host
// stops when the session ends.
type task struct {
	id, command, description, outputPath string
	started                              time.Time
	pgid                                 int
	done                                 chan struct{}

	mu       sync.Mutex
	status   string
	exitCode int
	ended    time.Time
	reason   string // why it was killed
}

func (t *task) snapshot() (status string, exitCode int, ended time.Time, reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status, t.exitCode, t.ended, t.reason
}

// tasks are the background tasks of one session (one state dir).
type tasks struct {
	dir string
	mu  sync.Mutex
	all map[string]*task
}

var (
	registryMu sync.Mutex
	registry   = map[string]*tasks{}
)

// tasksFor returns the tasks kept in stateDir, shared by the plugin's tools.
func tasksFor(stateDir string) *tasks {
	registryMu.Lock()
	defer registryMu.Unlock()
	ts, ok := registry[stateDir]
	if !ok {
		ts = &tasks{dir: filepath.Join(stateDir, "tasks"), all: map[string]*task{}}
		registry[stateDir] = ts
	}
	return ts
}

const idChars = "0123456789abcdefghijklmnopqrstuvwxyz"

func newTaskID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idChars[int(b[i])%len(idChars)]
	}
	return "bash-" + string(b)
}

func (ts *tasks) get(id string) (*task, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.all[id]
	return t, ok
}

func (ts *tasks) running() int {
	n := 0
	for _, t := range ts.all {
		if s, _, _, _ := t.snapshot(); s == statusRunning {
			n++
		}
	}
	return n
}

// start runs command in the background, its output (stdout and stderr
// together) in the task's output.log, stdin closed.
func (ts *tasks) start(sh pluginsdk.Shell, dir, command, description string, timeout time.Duration) (*task, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.running() >= maxRunningTasks {
		return nil, errors.New("Too many background tasks are already running.")
	}
	id := newTaskID()
	for ts.all[id] != nil {
		id = newTaskID()
	}
	taskDir := filepath.Join(ts.dir, id)
	if err := os.MkdirAll(taskDir, 0o700); err != nil {
		return nil, fmt.Errorf("create the task's folder: %w", err)
	}
	outPath := filepath.Join(taskDir, "output.log")
	out, err := os.OpenFile(outPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create the task's output log: %w", err)
	}
	path, flag := shellCommand(sh)
	cmd := exec.Command(path, flag, command)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	startInOwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("could not run the command with %s: %v", path, err)
	}
	t := &task{id: id, command: command, description: description, outputPath: outPath, started: time.Now(),
		pgid: cmd.Process.Pid, done: make(chan struct{}), status: statusRunning, exitCode: -1}
	untrack := pluginsdk.TrackProcessGroup(t.pgid)
	ts.all[id] = t
	timer := time.AfterFunc(timeout, func() { t.stop(fmt.Sprintf("Timed out after %ds", int(timeout/time.Second))) })
	go func() {
		err := cmd.Wait()
		timer.Stop()
		out.Close()
		t.mu.Lock()
		t.ended = time.Now()
		var exitErr *exec.ExitError
		switch {
		case t.status == statusKilled:
		case err == nil:
			t.status, t.exitCode = statusCompleted, 0
		case errors.As(err, &exitErr) && exitErr.ExitCode() >= 0:
			t.status, t.exitCode = statusFailed, exitErr.ExitCode()
		default:
			t.status, t.reason = statusKilled, err.Error()
		}
		t.mu.Unlock()
		// The shell is gone; what it left in its group goes too.
		killTaskGroup(t.pgid)
		untrack()
		close(t.done)
	}()
	return t, nil
}

// stop ends a running task: SIGTERM to its group, SIGKILL after killGrace.
// It reports whether the task was running.
func (t *task) stop(reason string) bool {
	t.mu.Lock()
	if t.status != statusRunning {
		t.mu.Unlock()
		return false
	}
	t.status, t.reason = statusKilled, reason
	t.mu.Unlock()
	terminateGroup(t.pgid)
	select {
	case <-t.done:
	case <-time.After(killGrace):
		killTaskGroup(t.pgid)
	}
	return true
}

func (t *task) summary() string {
	status, code, ended, reason := t.snapshot()
	var b strings.Builder
	fmt.Fprintf(&b, "task_id: %s\nstatus: %s\n", t.id, status)
	if t.description != "" {
		fmt.Fprintf(&b, "description: %s\n", t.description)
	}
	fmt.Fprintf(&b, "command: %s\n", t.command)
	if status != statusRunning && status != statusKilled {
		fmt.Fprintf(&b, "exit_code: %d\n", code)
	}
	if reason != "" {
		fmt.Fprintf(&b, "reason: %s\n", reason)
	}
	fmt.Fprintf(&b, "started: %s\n", t.started.UTC().Format(time.RFC3339))
	if !ended.IsZero() {
		fmt.Fprintf(&b, "duration: %s\n", ended.Sub(t.started).Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "output_path: %s\n", t.outputPath)
	return b.String()
}

// startBackground is Shell with run_in_background: approval `run
// background command`, then the task starts and the call returns at once.
func (s *Shell) startBackground(ctx context.Context, p Params, timeout int) pluginsdk.Result {
	if strings.TrimSpace(p.Description) == "" {
		return pluginsdk.Error("description is required when run_in_background is true").WithBrief("Missing description")
	}
	if s.session == nil || s.session.StateDir() == "" {
		return pluginsdk.Error("Background tasks need the session's state dir, which this host does not give.").
			WithBrief("No state dir")
	}
	sh := s.env.Shell()
	d, err := s.approval.Request(ctx, backgroundAction, fmt.Sprintf("Run background command `%s` (%s)", p.Command, p.Description),
		pluginsdk.DisplayBlock{Kind: "shell", Data: ShellBlock{Language: shellLanguage(sh), Command: p.Command}})
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Could not ask the user to approve the command: %v", err)).WithBrief("Approval failed")
	}
	if !d.Approved {
		return pluginsdk.Rejected(d.Feedback)
	}
	t, err := tasksFor(s.session.StateDir()).start(sh, s.env.WorkDir(), p.Command, p.Description, time.Duration(timeout)*time.Second)
	if err != nil {
		return pluginsdk.Error(err.Error()).WithBrief("Not started")
	}
	return pluginsdk.Ok(t.summary() + "\nThe command runs in the background and is killed when the session ends. " +
		"Use TaskOutput with this task_id to read its output (block=true waits for it to finish), " +
		"TaskList to see the tasks and TaskStop to stop it.").WithBrief("Started " + t.id)
}

// TaskListParams are TaskList's arguments.
type TaskListParams struct {
	ActiveOnly bool `json:"active_only,omitempty" default:"true" jsonschema:"List only the running tasks (default true)."`
	Limit      int  `json:"limit,omitempty" default:"20" minimum:"1" maximum:"100" jsonschema:"At most this many tasks, newest first (default 20)."`
}

// TaskOutputParams are TaskOutput's arguments.
type TaskOutputParams struct {
	TaskID  string `json:"task_id" minLength:"1" jsonschema:"The task's id, e.g. bash-1a2b3c4d."`
	Block   bool   `json:"block,omitempty" default:"false" jsonschema:"Wait for the task to finish, up to timeout seconds (default false)."`
	Timeout int    `json:"timeout,omitempty" default:"30" minimum:"0" maximum:"3600" jsonschema:"How long block waits, in seconds (default 30, at most 3600)."`
}

// TaskStopParams are TaskStop's arguments.
type TaskStopParams struct {
	TaskID string `json:"task_id" minLength:"1" jsonschema:"The task's id."`
	Reason string `json:"reason,omitempty" default:"Stopped by TaskStop" jsonschema:"Why the task is stopped."`
}

// TaskTools are TaskList, TaskOutput and TaskStop over the session's tasks.
type TaskTools struct {
	approval pluginsdk.Approval
	tasks    *tasks
}

// NewTaskTools constructs the task tools from the host's Session (whose
// state dir holds the tasks' output) and Approval (TaskStop asks).
func NewTaskTools(a pluginsdk.Approval, sess pluginsdk.Session) (*TaskTools, error) {
	if sess.StateDir() == "" {
		return nil, pluginsdk.Skip("the host gives no state dir for background tasks")
	}
	return &TaskTools{approval: a, tasks: tasksFor(sess.StateDir())}, nil
}

func notFound(id string) pluginsdk.Result {
	return pluginsdk.Error("Task not found: " + id).WithBrief("Task not found")
}

// List implements TaskList.
func (tt *TaskTools) List(_ context.Context, p TaskListParams) pluginsdk.Result {
	if p.Limit < 1 || p.Limit > 100 {
		return pluginsdk.Error(fmt.Sprintf("limit must be between 1 and 100, got %d.", p.Limit)).WithBrief("Invalid limit")
	}
	tt.tasks.mu.Lock()
	list := make([]*task, 0, len(tt.tasks.all))
	for _, t := range tt.tasks.all {
		if s, _, _, _ := t.snapshot(); !p.ActiveOnly || s == statusRunning {
			list = append(list, t)
		}
	}
	tt.tasks.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].started.After(list[j].started) })
	if len(list) > p.Limit {
		list = list[:p.Limit]
	}
	if len(list) == 0 {
		if p.ActiveOnly {
			return pluginsdk.Ok("").WithMessage("No background task is running.").WithBrief("No tasks")
		}
		return pluginsdk.Ok("").WithMessage("No background tasks.").WithBrief("No tasks")
	}
	parts := make([]string, len(list))
	for i, t := range list {
		parts[i] = t.summary()
	}
	return pluginsdk.Ok(strings.Join(parts, "\n")).WithBrief(fmt.Sprintf("%d tasks", len(list)))
}

// Output implements TaskOutput.
func (tt *TaskTools) Output(ctx context.Context, p TaskOutputParams) pluginsdk.Result {
	if p.Timeout < 0 || p.Timeout > maxOutputWait {
		return pluginsdk.Error(fmt.Sprintf("timeout must be between 0 and %d seconds, got %d.", maxOutputWait, p.Timeout)).
			WithBrief("Invalid timeout")
	}
	t, ok := tt.tasks.get(p.TaskID)
	if !ok {
		return notFound(p.TaskID)
	}
	retrieval := "success"
	select {
	case <-t.done:
	default:
		retrieval = "not_ready"
		if p.Block {
			timer := time.NewTimer(time.Duration(p.Timeout) * time.Second)
			defer timer.Stop()
			select {
			case <-t.done:
				retrieval = "success"
			case <-timer.C:
				retrieval = "timeout"
			case <-ctx.Done():
				return pluginsdk.Error("TaskOutput was cancelled.").WithBrief("Cancelled")
			}
		}
	}
	status, code, _, reason := t.snapshot()
	tail, size, err := readTail(t.outputPath, outputTail)
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Could not read the output of %s: %v", t.id, err)).WithBrief("Output unreadable")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "retrieval_status: %s\ntask_id: %s\nstatus: %s\n", retrieval, t.id, status)
	if status == statusCompleted || status == statusFailed {
		fmt.Fprintf(&b, "exit_code: %d\n", code)
	}
	if reason != "" {
		fmt.Fprintf(&b, "reason: %s\n", reason)
	}
	fmt.Fprintf(&b, "output_path: %s\noutput_size_bytes: %d\noutput_shown_bytes: %d\noutput_truncated: %t\n",
		t.outputPath, size, len(tail), int64(len(tail)) < size)
	if int64(len(tail)) < size {
		b.WriteString("(only the end of the output is shown; read the whole log with ReadFile at output_path)\n")
	}
	b.WriteString("\n[output]\n")
	b.WriteString(strings.ToValidUTF8(tail, "\uFFFD"))
	return pluginsdk.Ok(b.String()).WithBrief(fmt.Sprintf("%s %s", t.id, status))
}

// Stop implements TaskStop.
func (tt *TaskTools) Stop(ctx context.Context, p TaskStopParams) pluginsdk.Result {
	t, ok := tt.tasks.get(p.TaskID)
	if !ok {
		return notFound(p.TaskID)
	}
	reason := strings.TrimSpace(p.Reason)
	if reason == "" {
		reason = "Stopped by TaskStop"
	}
	if s, _, _, _ := t.snapshot(); s != statusRunning {
		return pluginsdk.Ok(t.summary()).WithMessage(fmt.Sprintf("Task %s is not running (%s).", t.id, s)).WithBrief("Not running")
	}
	d, err := tt.approval.Request(ctx, stopAction, fmt.Sprintf("Stop background task %s (`%s`)", t.id, t.command))
	if err != nil {
		return pluginsdk.Error(fmt.Sprintf("Could not ask the user to approve stopping the task: %v", err)).WithBrief("Approval failed")
	}
	if !d.Approved {
		return pluginsdk.Rejected(d.Feedback)
	}
	t.stop(reason)
	<-t.done
	return pluginsdk.Ok(t.summary()).WithBrief("Stopped " + t.id)
}

// readTail returns the last n bytes of the file at path and its size.
func readTail(path string, n int64) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	size := st.Size()
	off := max(size-n, 0)
	b := make([]byte, size-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return "", 0, err
	}
	return string(b), size, nil
}

func taskDefinitions() []pluginsdk.Definition {
	return []pluginsdk.Definition{
		pluginsdk.NewTool[TaskListParams]("TaskList", "List the background tasks.",
			func(a pluginsdk.Approval, s pluginsdk.Session) (pluginsdk.Handler[TaskListParams], error) {
				tt, err := NewTaskTools(a, s)
				if err != nil {
					return nil, err
				}
				return pluginsdk.HandlerFunc[TaskListParams](tt.List), nil
			}, pluginsdk.ReadOnly(), pluginsdk.ClosedWorld(), pluginsdk.WithDescriptionFile(descriptions, "task_list.md", nil)),
		pluginsdk.NewTool[TaskOutputParams]("TaskOutput", "Read a background task's output.",
			func(a pluginsdk.Approval, s pluginsdk.Session) (pluginsdk.Handler[TaskOutputParams], error) {
				tt, err := NewTaskTools(a, s)
				if err != nil {
					return nil, err
				}
				return pluginsdk.HandlerFunc[TaskOutputParams](tt.Output), nil
			}, pluginsdk.ReadOnly(), pluginsdk.ClosedWorld(), pluginsdk.WithTimeout(time.Hour),
			pluginsdk.WithDescriptionFile(descriptions, "task_output.md", nil)),
		pluginsdk.NewTool[TaskStopParams]("TaskStop", "Stop a background task.",
			func(a pluginsdk.Approval, s pluginsdk.Session) (pluginsdk.Handler[TaskStopParams], error) {
				tt, err := NewTaskTools(a, s)
				if err != nil {
					return nil, err
				}
				return pluginsdk.HandlerFunc[TaskStopParams](tt.Stop), nil
			}, pluginsdk.Destructive(), pluginsdk.Idempotent(), pluginsdk.ClosedWorld(),
			pluginsdk.WithDescriptionFile(descriptions, "task_stop.md", nil)),
	}
}
