package loop

import (
	"context"
	"testing"
)

type fakeHooks struct {
	block    bool
	reason   string
	stop     string
	stops    int
	compacts []string
}

func (h *fakeHooks) UserPromptSubmit(context.Context, string) (bool, string) {
	return h.block, h.reason
}
func (h *fakeHooks) Stop(context.Context, bool) string {
	h.stops++
	return h.stop
}
func (h *fakeHooks) PreCompact(_ context.Context, trigger string, _ int64) {
	h.compacts = append(h.compacts, "pre:"+trigger)
}
func (h *fakeHooks) PostCompact(_ context.Context, trigger string, _ int64) {
	h.compacts = append(h.compacts, "post:"+trigger)
}

// TestHooks: a blocked prompt never reaches the model; a Stop hook's reason
// continues the turn once, as a user message.
func TestHooks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		hooks    fakeHooks
		requests int
		reason   StopReason
		text     string
		history  string
	}{
		{"blocked prompt", fakeHooks{block: true}, 0, StopBlocked, PromptBlockedText, ""},
		{"blocked with reason", fakeHooks{block: true, reason: "no secrets"}, 0, StopBlocked, "no secrets", ""},
		{"stop continues once", fakeHooks{stop: "run the tests too"}, 2, StopDone, "", "user,assistant,user,assistant"},
		{"stop allows", fakeHooks{}, 1, StopDone, "", "user,assistant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prov := &fakeProvider{responses: [][]item{{text("one")}, {text("two")}}}
			rec := &recorder{}
			h := tc.hooks
			l, err := New(Config{Provider: prov, Toolset: newToolset(t), Observer: rec, Hooks: &h})
			if err != nil {
				t.Fatal(err)
			}
			res, err := l.Turn(context.Background(), "hi")
			if err != nil || res.Reason != tc.reason {
				t.Fatalf("res %+v err %v", res, err)
			}
			if len(prov.requests) != tc.requests {
				t.Fatalf("%d model requests, want %d", len(prov.requests), tc.requests)
			}
			if tc.text != "" {
				var got string
				for _, e := range rec.Events() {
					if d, ok := e.(TextDelta); ok {
						got += d.Text
					}
				}
				if got != tc.text {
					t.Fatalf("text %q, want %q", got, tc.text)
				}
			}
			if got := roles(l.History()); got != tc.history {
				t.Fatalf("history %s, want %s", got, tc.history)
			}
			if tc.hooks.stop != "" && (h.stops != 1 || l.History()[2].Text() != tc.hooks.stop) {
				t.Fatalf("stop hook ran %d times; history %+v", h.stops, l.History())
			}
		})
	}
}
