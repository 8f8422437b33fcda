package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kosong-host/kosong-host/host/testbin"
)

// TestRunShowsPluginProgress: a plugin tool's progress reports reach the
// stream-json front end as tool_progress events, through the real host and
// plugin binaries, and each restarts the call's timeout: five steps of
// 300ms outlive a 1s timeout.
func TestRunShowsPluginProgress(t *testing.T) {
	cc, err := testbin.Build("host/testdata/plugins/capcheck", "capcheck")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args string
		status     string
		output     string
		progress   int
	}{
		{"progress keeps a long call alive", `{steps: 5, ms: 300}`, "ok", "5 steps", 5},
		{"a call without progress times out", `{steps: 1, ms: 3000}`, "error", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{
				"agent.yaml": fmt.Sprintf("version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools:\n    - {plugin: %q, tools: [Steps], timeout: 1s}\n", cc),
				"s.md":       "hi",
				"script.yaml": fmt.Sprintf(`
turns:
  - tool_calls: [{id: p1, name: Steps, arguments: %s}]
  - text: "Done."
`, tt.args),
			})
			r := runHost(t, dir, "", "run", "--provider", "scripted", "--script", "script.yaml", "--yolo",
				"--output-format", "stream-json", "-p", "step by step")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			type event struct {
				Type, ID, Name, Status, Output, Message string
				Progress, Total                         float64
			}
			var progress []event
			var res *event
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				var ev event
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				switch ev.Type {
				case "tool_progress":
					progress = append(progress, ev)
				case "tool_result":
					res = &ev
				}
			}
			if res == nil || res.Status != tt.status || strings.TrimSpace(res.Output) != tt.output {
				t.Fatalf("result %+v\n%s", res, r.stdout)
			}
			if tt.status == "error" && !strings.Contains(r.stdout, "Tool Steps timed out after 1s") {
				t.Fatalf("no timeout message:\n%s", r.stdout)
			}
			if len(progress) != tt.progress {
				t.Fatalf("%d progress events, want %d:\n%s", len(progress), tt.progress, r.stdout)
			}
			for i, ev := range progress {
				want := event{Type: "tool_progress", ID: "p1", Name: "Steps", Progress: float64(i + 1), Total: 5,
					Message: fmt.Sprintf("step %d", i+1)}
				if ev != want {
					t.Fatalf("progress event %d = %+v, want %+v", i, ev, want)
				}
			}
		})
	}
}

// TestMCPServeForwardsPluginProgress: `mcp serve` passes a plugin tool's
// progress on to its client as progress notifications, as it does an MCP
// tool's.
func TestMCPServeForwardsPluginProgress(t *testing.T) {
	cc, err := testbin.Build("host/testdata/plugins/capcheck", "capcheck")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{
		"agent.yaml": fmt.Sprintf("version: 1\nagent:\n  name: t\n  system_prompt_path: ./s.md\n  tools: [%q]\n", cc+":Steps"),
		"s.md":       "hi",
	})
	// Notifications may be handled after the call's result: collect them
	// as they come.
	notes := make(chan string, 16)
	cs := serveMCP(t, dir, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		notes <- fmt.Sprintf("%v %v/%v %s", req.Params.ProgressToken, req.Params.Progress, req.Params.Total, req.Params.Message)
	}})
	// Steps 150 ms apart: the host passes on at most one report a call
	// every 100 ms (docs/limits.md).
	params := &mcp.CallToolParams{Name: "Steps", Arguments: map[string]any{"steps": 3, "ms": 150}}
	params.SetProgressToken("tok")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	want := []string{"tok 1/3 step 1", "tok 2/3 step 2", "tok 3/3 step 3"}
	var got []string
	for len(got) < len(want) {
		select {
		case n := <-notes:
			got = append(got, n)
		case <-ctx.Done():
			t.Fatalf("progress notifications %q, want %q", got, want)
		}
	}
	slices.Sort(got) // the client may handle notifications concurrently
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("progress notifications %q, want %q", got, want)
	}
}
