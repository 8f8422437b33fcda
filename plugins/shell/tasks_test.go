//go:build unix

package shell

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/pluginsdk"
	"github.com/kosong-host/kosong-host/pluginsdk/plugintest"
)

var taskIDRe = regexp.MustCompile(`bash-[0-9a-z]{8}`)

func startTask(t *testing.T, h *plugintest.Harness, command string) string {
	t.Helper()
	r := h.MustCall(t, "Shell", fmt.Sprintf(`{"command": %q, "run_in_background": true, "description": "test task"}`, command))
	if r.Kind != pluginsdk.KindOk || !strings.HasPrefix(r.Brief, "Started bash-") {
		t.Fatalf("start %q: %+v", command, r)
	}
	id := taskIDRe.FindString(r.Brief)
	if id == "" || !strings.Contains(r.Text(), "task_id: "+id) || !strings.Contains(r.Text(), "status: running") {
		t.Fatalf("start result %+v", r)
	}
	return id
}

func stopAll(t *testing.T, h *plugintest.Harness, ids ...string) {
	t.Cleanup(func() {
		for _, id := range ids {
			h.MustCall(t, "TaskStop", fmt.Sprintf(`{"task_id": %q}`, id))
		}
	})
}

func TestBackgroundTaskLifecycle(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	id := startTask(t, h, "echo started; exec sleep 60")
	stopAll(t, h, id)

	list := h.MustCall(t, "TaskList", `{}`)
	if !strings.Contains(list.Text(), "task_id: "+id) || !strings.Contains(list.Text(), "status: running") {
		t.Fatalf("TaskList: %+v", list)
	}
	out := h.MustCall(t, "TaskOutput", fmt.Sprintf(`{"task_id": %q}`, id))
	if !strings.Contains(out.Text(), "retrieval_status: not_ready") || !strings.Contains(out.Text(), "[output]") {
		t.Fatalf("TaskOutput: %+v", out)
	}
	waited := h.MustCall(t, "TaskOutput", fmt.Sprintf(`{"task_id": %q, "block": true, "timeout": 1}`, id))
	if !strings.Contains(waited.Text(), "retrieval_status: timeout") || !strings.Contains(waited.Text(), "started\n") {
		t.Fatalf("blocking TaskOutput: %+v", waited)
	}
	stop := h.MustCall(t, "TaskStop", fmt.Sprintf(`{"task_id": %q, "reason": "no longer needed"}`, id))
	if stop.Kind != pluginsdk.KindOk || !strings.Contains(stop.Text(), "status: killed") || !strings.Contains(stop.Text(), "reason: no longer needed") {
		t.Fatalf("TaskStop: %+v", stop)
	}
	after := h.MustCall(t, "TaskOutput", fmt.Sprintf(`{"task_id": %q}`, id))
	if !strings.Contains(after.Text(), "retrieval_status: success") || !strings.Contains(after.Text(), "status: killed") {
		t.Fatalf("TaskOutput after stop: %+v", after)
	}
	if l := h.MustCall(t, "TaskList", `{}`); l.Message != "No background task is running." {
		t.Fatalf("TaskList after stop: %+v", l)
	}
	if l := h.MustCall(t, "TaskList", `{"active_only": false}`); !strings.Contains(l.Text(), "status: killed") {
		t.Fatalf("TaskList of all: %+v", l)
	}
	var actions []string
	for _, a := range h.Approvals() {
		actions = append(actions, a.Action)
	}
	if strings.Join(actions, ",") != "run background command,stop background task" {
		t.Fatalf("approval actions = %v", actions)
	}
}

func TestBackgroundTaskCompletes(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	id := startTask(t, h, "echo out; echo err >&2; exit 3")
	r := h.MustCall(t, "TaskOutput", fmt.Sprintf(`{"task_id": %q, "block": true, "timeout": 60}`, id))
	for _, want := range []string{"retrieval_status: success", "status: failed", "exit_code: 3", "output_truncated: false", "[output]\nout\nerr\n"} {
		if !strings.Contains(r.Text(), want) {
			t.Errorf("TaskOutput lacks %q:\n%s", want, r.Text())
		}
	}
}

func TestBackgroundTaskErrors(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	tests := []struct{ name, tool, args, want string }{
		{"unknown task for TaskOutput", "TaskOutput", `{"task_id": "bash-00000000"}`, "Task not found: bash-00000000"},
		{"unknown task for TaskStop", "TaskStop", `{"task_id": "nope"}`, "Task not found: nope"},
		{"no description", "Shell", `{"command": "sleep 1", "run_in_background": true}`, "description is required when run_in_background is true"},
		{"foreground timeout over 300", "Shell", `{"command": "true", "timeout": 301}`, "timeout must be between 1 and 300 seconds, got 301."},
		// Out of the schema's bounds: refused before the call, as by the host.
		{"background timeout over a day", "Shell", `{"command": "true", "timeout": 86401, "run_in_background": true, "description": "d"}`,
			`Error validating JSON arguments: parameter "timeout": maximum: 86401 is greater than 86400`},
		{"TaskOutput timeout", "TaskOutput", `{"task_id": "x", "timeout": 3601}`,
			`Error validating JSON arguments: parameter "timeout": maximum: 3601 is greater than 3600`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.MustCall(t, tt.tool, tt.args)
			if r.Kind != pluginsdk.KindError || r.Message != tt.want {
				t.Fatalf("result = %+v, want error %q", r, tt.want)
			}
		})
	}
}

func TestTooManyBackgroundTasks(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	var ids []string
	for range maxRunningTasks {
		ids = append(ids, startTask(t, h, "exec sleep 60"))
	}
	stopAll(t, h, ids...)
	r := h.MustCall(t, "Shell", `{"command": "sleep 60", "run_in_background": true, "description": "one too many"}`)
	if r.Kind != pluginsdk.KindError || r.Message != "Too many background tasks are already running." {
		t.Fatalf("fifth task: %+v", r)
	}
}

func TestBackgroundTaskTimeout(t *testing.T) {
	h := plugintest.New(t, plugintest.Options{}, definitions()...)
	r := h.MustCall(t, "Shell", `{"command": "exec sleep 60", "run_in_background": true, "description": "d", "timeout": 1}`)
	id := taskIDRe.FindString(r.Brief)
	out, err := h.Call(context.Background(), "TaskOutput", fmt.Sprintf(`{"task_id": %q, "block": true, "timeout": 60}`, id))
	if err != nil || !strings.Contains(out.Text(), "status: killed") || !strings.Contains(out.Text(), "reason: Timed out after 1s") {
		t.Fatalf("TaskOutput of a timed-out task: %+v %v", out, err)
	}
}
