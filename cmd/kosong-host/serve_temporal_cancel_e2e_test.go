package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/serverclient"
	"github.com/kosong-host/kosong-host/providers/openaitest"
)

// TestServeTemporalCancel: cancelling a served Temporal session's turn
// stops it as Ctrl-C does in process: the running Shell call is cancelled
// and answered as interrupted, the turn ends cancelled with the
// interruption note in the history, and the session takes its next turn.
func TestServeTemporalCancel(t *testing.T) {
	model := openaitest.NewServer(t,
		shellCall("call_long", "touch started.txt && sleep 60 && touch late.txt"),
		openaitest.Response{Text: []string{"never said"}},
		openaitest.Response{Text: []string{"after the cancel"}},
	)
	ts := startTemporalServe(t, model)
	ctx, p, sess, evs := ts.session(t, serverclient.ModeYolo)
	if _, err := p.api.Send(ctx, sess.ID, serverclient.Message{Text: "run it"}); err != nil {
		t.Fatal(err)
	}
	evs.until("tool_call", func(m map[string]any) bool { return m["id"] == "call_long" })
	c, err := p.api.Cancel(ctx, sess.ID)
	if err != nil || !c.Cancelled {
		t.Fatalf("cancel: %+v, %v", c, err)
	}
	evs.until("turn_end", func(m map[string]any) bool { return m["reason"] == string(loop.StopCancelled) })
	h, err := p.api.History(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if out := historyToolText(h, "call_long"); !strings.Contains(out, "interrupted by the user") {
		t.Errorf("the cancelled call's result %q does not say it was interrupted", out)
	}
	if last := h.Messages[len(h.Messages)-1]; last.Role != "user" || !strings.Contains(last.Text, "The user interrupted you") {
		t.Errorf("the history ends with %+v, want the interruption note", last)
	}
	if _, err := os.Stat(filepath.Join(ts.dir, "late.txt")); err == nil {
		t.Error("the cancelled command ran to its end")
	}
	// The session goes on.
	if _, err := p.api.Send(ctx, sess.ID, serverclient.Message{Text: "and now?"}); err != nil {
		t.Fatal(err)
	}
	if end := evs.until("turn_end", nil); end["reason"] != string(loop.StopDone) {
		t.Fatalf("the next turn: %v", end)
	}
	if c, err := p.api.Cancel(ctx, sess.ID); err != nil || c.Cancelled {
		t.Errorf("cancel with no turn running: %+v, %v", c, err)
	}
}
