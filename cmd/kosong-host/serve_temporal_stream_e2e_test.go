package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestServeTemporalStreams: a turn of serve --engine temporal reaches the
// server's clients as the model streams it: the model holds its stream
// after the first word until a client saw it as a text event, which comes
// before the step's tool_call, its tool_result and the turn_end; each of
// the turn's events is logged once.
func TestServeTemporalStreams(t *testing.T) {
	seen := make(chan struct{})
	var ranOut atomic.Bool
	first := shellCall("call_live", "echo live-run")
	first.Text = []string{"Running ", "it."}
	first.AfterChunk = func(ctx context.Context, n int, _ string) {
		if n != 1 { // chunk 0 is the role, 1 the first word
			return
		}
		select {
		case <-seen:
		case <-ctx.Done():
		case <-time.After(expectWithin / 2):
			ranOut.Store(true)
		}
	}
	model := openaitest.NewServer(t, first, openaitest.Response{Text: []string{"all ", "done"}})
	ts := startTemporalServe(t, model)
	ctx, p, sess, evs := ts.session(t, serverclient.ModeYolo)
	if _, err := p.api.Send(ctx, sess.ID, serverclient.Message{Text: "go"}); err != nil {
		t.Fatal(err)
	}
	if got := evs.until("text", nil); got["text"] != "Running " || got["step"] != float64(1) {
		t.Errorf("the first text event %v", got)
	}
	close(seen)
	end := evs.until("turn_end", nil)
	if end["reason"] != "done" || end["steps"] != float64(2) {
		t.Errorf("turn_end %v", end)
	}
	if ranOut.Load() {
		t.Error("the model held its stream until its wait ran out: the first word did not reach the client while the model streamed")
	}

	count := map[string]int{}
	at := map[string]int{}
	texts := map[float64]string{}
	for i, ev := range evs.seen {
		count[ev.Type]++
		if _, ok := at[ev.Type]; !ok {
			at[ev.Type] = i
		}
		var m map[string]any
		if err := json.Unmarshal(ev.Data, &m); err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "text":
			step, _ := m["step"].(float64)
			texts[step] += m["text"].(string)
		case "tool_result":
			if m["id"] != "call_live" || !strings.Contains(m["output"].(string), "live-run") {
				t.Errorf("tool_result %v", m)
			}
		}
	}
	for typ, n := range map[string]int{"turn_start": 1, "step_start": 2, "tool_call": 1, "tool_result": 1, "turn_end": 1} {
		if count[typ] != n {
			t.Errorf("%d %s events, want %d; seen %s", count[typ], typ, n, typesOf(evs.seen))
		}
	}
	if !(at["text"] < at["tool_call"] && at["tool_call"] < at["tool_result"] && at["tool_result"] < at["turn_end"]) {
		t.Errorf("events out of order: %s", typesOf(evs.seen))
	}
	if texts[1] != "Running it." || texts[2] != "all done" {
		t.Errorf("the text events make %v", texts)
	}
}
