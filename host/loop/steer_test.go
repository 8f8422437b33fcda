package loop

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// TestSteer: a message steered into a running turn reaches the model's
// next request of that turn, as a user message after the step's tool
// results; one steered into the last step makes one more step; one that
// no step took (the turn was interrupted) comes back in Unsteered; with
// no turn running Steer refuses.
func TestSteer(t *testing.T) {
	tests := []struct {
		name string
		// during runs inside the turn: in the tool call (tool) or when the
		// first request is made (stream).
		inTool    bool
		cancel    bool // the tool interrupts the turn after steering
		responses [][]item
		wantSteps int
		wantLast  []string // the last messages of the second request (role: text)
		wantLeft  []string
	}{
		{name: "during a tool call", inTool: true,
			responses: [][]item{{toolCall("c1", "Work", `{}`)}, {text("done")}},
			wantSteps: 2, wantLast: []string{"assistant: ", "tool: worked", "user: " + SteeredNote + "also check the tests"}},
		{name: "during the last step",
			responses: [][]item{{text("first answer")}, {text("second answer")}},
			wantSteps: 2, wantLast: []string{"assistant: first answer", "user: " + SteeredNote + "also check the tests"}},
		{name: "interrupted before the step ended", inTool: true, cancel: true,
			responses: [][]item{{toolCall("c1", "Work", `{}`)}, {text("never")}},
			wantLeft:  []string{"also check the tests"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var l *Loop
			steered := false
			tool := &fakeTool{name: "Work", fn: func(context.Context, string, json.RawMessage) toolset.Result {
				steered = l.Steer("also check the tests")
				if tt.cancel {
					cancel()
				}
				return toolset.Result{Output: []providers.ContentPart{providers.TextPart("worked")}}
			}}
			prov := &fakeProvider{responses: tt.responses[:1], more: func(i int) []item {
				return tt.responses[i]
			}}
			if !tt.inTool {
				prov.responses = nil
				prov.more = func(i int) []item {
					if i == 0 {
						steered = l.Steer("also check the tests")
					}
					return tt.responses[i]
				}
			}
			var rec *recorder
			l, rec = newLoop(t, prov, newToolset(t, tool), nil)
			if l.Steer("before any turn") {
				t.Fatal("Steer took a message with no turn running")
			}
			res, err := l.Turn(ctx, "fix the bug")
			if !steered {
				t.Fatal("Steer refused a message during the turn")
			}
			if !slices.Equal(res.Unsteered, tt.wantLeft) {
				t.Fatalf("Unsteered %q, want %q", res.Unsteered, tt.wantLeft)
			}
			if tt.cancel {
				if err == nil || len(prov.Requests()) != 1 {
					t.Fatalf("err %v after %d requests, want an interrupted turn of 1", err, len(prov.Requests()))
				}
				return
			}
			if err != nil || res.Steps != tt.wantSteps {
				t.Fatalf("res %+v err %v", res, err)
			}
			reqs := prov.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			h := reqs[1].History
			var last []string
			for _, m := range h[len(h)-len(tt.wantLast):] {
				last = append(last, string(m.Role)+": "+m.Text())
			}
			if !slices.Equal(last, tt.wantLast) {
				t.Fatalf("the second request ends with %q, want %q", last, tt.wantLast)
			}
			if got := l.History(); got[len(got)-1].Role != providers.RoleAssistant {
				t.Fatalf("the history does not end with the answer: %+v", got)
			}
			found := false
			for _, e := range rec.Events() {
				if s, ok := e.(Steered); ok && slices.Equal(s.Texts, []string{"also check the tests"}) && s.Step == 1 {
					found = true
				}
			}
			if !found {
				t.Fatalf("no Steered event: %#v", rec.Events())
			}
			if l.Steer("after the turn") {
				t.Fatal("Steer took a message after the turn ended")
			}
		})
	}
}
