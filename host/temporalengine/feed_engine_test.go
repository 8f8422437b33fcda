package temporalengine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/kosong-host/kosong-host/host/approval"
	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/temporalengine/temporaltest"
	"github.com/kosong-host/kosong-host/host/toolset"
	"github.com/kosong-host/kosong-host/providers"
)

// slowProvider calls Noop first, then answers its words one by one, a
// word every 200ms; after the first word it waits for gate, so that the
// model request cannot end before the test has seen that word arrive.
type slowProvider struct {
	words []string
	gate  <-chan struct{}
}

func (slowProvider) Name() string  { return "slow" }
func (slowProvider) Model() string { return "slow" }
func (p slowProvider) Stream(ctx context.Context, req providers.Request) (providers.Stream, error) {
	if req.History[len(req.History)-1].Role == providers.RoleUser {
		return &events{evs: []providers.Event{{Kind: providers.EventText, Text: "Let me look."},
			{Kind: providers.EventToolCall, ToolCall: &providers.ToolCall{ID: "call_1", Name: "Noop", Arguments: "{}"}},
			{Kind: providers.EventStop, Stop: providers.StopToolUse}}}, nil
	}
	return &slowStream{ctx: ctx, words: p.words, gate: p.gate}, nil
}

type slowStream struct {
	ctx   context.Context
	words []string
	gate  <-chan struct{}
	n     int
}

func (s *slowStream) Next() (providers.Event, error) {
	if s.n == 1 {
		select {
		case <-s.gate:
		case <-s.ctx.Done():
			return providers.Event{}, s.ctx.Err()
		}
	}
	if s.n > 0 {
		time.Sleep(200 * time.Millisecond) // the model's pace, not a synchronisation
	}
	if s.n >= len(s.words) {
		if s.n == len(s.words) {
			s.n++
			return providers.Event{Kind: providers.EventStop, Stop: providers.StopEnd}, nil
		}
		return providers.Event{}, errEOF
	}
	s.n++
	return providers.Event{Kind: providers.EventText, Text: s.words[s.n-1]}, nil
}
func (s *slowStream) Close() error { return nil }

var errEOF = func() error { _, err := (&events{}).Next(); return err }()

type slowHosted struct {
	p  providers.ChatProvider
	ts *toolset.Toolset
}

func (h *slowHosted) Provider() providers.ChatProvider { return h.p }
func (h *slowHosted) System() string                   { return "system" }
func (h *slowHosted) Toolset() *toolset.Toolset        { return h.ts }
func (h *slowHosted) Close()                           {}

// feedRecord is a feed event with its cursor.
type feedRecord struct {
	Cursor Cursor
	Event  FeedEvent
}

// TestFeedStreamsLive runs a turn of two steps on the real dev server
// with a model that streams a word every 200ms: the client sees the
// first word of the answer while the model request still runs (the
// model waits for the client to have seen it), then the tool call and
// its result, and the answer word by word, ending with TurnEnded. A
// follower that disconnects mid-answer and resumes from its cursor gets
// exactly the rest; the session workflow's history holds no delta.
func TestFeedStreamsLive(t *testing.T) {
	srv := temporaltest.Start(t)
	c := srv.Dial(t)
	gate := make(chan struct{})
	words := []string{"one ", "two ", "three ", "four ", "five"}
	acts := NewActivities(func(context.Context, OpenRequest, approval.Asker) (Hosted, error) {
		return &slowHosted{p: slowProvider{words: words, gate: gate}, ts: newHosted(t).ts}, nil
	})
	startTestWorker(t, c, acts)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := Start(ctx, c, "q", SessionInput{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// A second follower disconnects after the answer's first word (the
	// model is held there) and reconnects from its last cursor.
	var followed []feedRecord
	followerDone := make(chan error, 1)
	errDisconnect := errors.New("disconnect")
	go func() {
		var last Cursor
		err := s.Follow(ctx, 1, Cursor{}, func(cur Cursor, e FeedEvent) error {
			followed = append(followed, feedRecord{cur, e})
			last = cur
			if e.Kind == FeedText && e.Step == 2 {
				return errDisconnect
			}
			return nil
		})
		if err != errDisconnect {
			followerDone <- err
			return
		}
		followerDone <- s.Follow(ctx, 1, last, func(cur Cursor, e FeedEvent) error {
			followed = append(followed, feedRecord{cur, e})
			return nil
		})
	}()

	var mu sync.Mutex
	var seen []loop.Event
	var once sync.Once
	res, err := s.TurnObserved(ctx, "go", func(e loop.Event) {
		mu.Lock()
		seen = append(seen, e)
		mu.Unlock()
		if d, ok := e.(loop.TextDelta); ok && d.Step == 2 {
			once.Do(func() { close(gate) }) // the model request goes on only now
		}
	})
	if err != nil || res.Steps != 2 || res.Reason != loop.StopDone {
		t.Fatalf("turn: %+v, %v", res, err)
	}
	if err := <-followerDone; err != nil {
		t.Fatalf("the follower: %v", err)
	}

	// What the observer saw, in order.
	var kinds []string
	var answer strings.Builder
	for _, e := range seen {
		switch e := e.(type) {
		case loop.StepStarted:
			kinds = append(kinds, "step")
		case loop.ToolCallStarted:
			kinds = append(kinds, "call:"+e.Call.Name)
		case loop.ToolCallFinished:
			kinds = append(kinds, "result:"+e.Result.OutputText())
		case loop.TextDelta:
			if e.Step == 2 {
				answer.WriteString(e.Text)
			}
			if k := "text"; len(kinds) == 0 || kinds[len(kinds)-1] != k {
				kinds = append(kinds, k)
			}
		case loop.TurnEnded:
			kinds = append(kinds, "end")
		}
	}
	if got, want := strings.Join(kinds, " "), "step text call:Noop result:ok step text end"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if got := answer.String(); got != strings.Join(words, "") {
		t.Errorf("the answer's deltas make %q", got)
	}

	// The whole feed, read again from its start; the follower that
	// reconnected got exactly it.
	var all []feedRecord
	if err := s.Follow(ctx, 1, Cursor{}, func(cur Cursor, e FeedEvent) error {
		all = append(all, feedRecord{cur, e})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ab, _ := json.Marshal(all)
	fb, _ := json.Marshal(followed)
	if string(ab) != string(fb) {
		t.Errorf("the reconnected follower got\n%s\nthe feed is\n%s", fb, ab)
	}
	if len(all) == 0 || all[len(all)-1].Event.Kind != FeedEnd {
		t.Fatalf("the feed does not end with the turn's end: %s", ab)
	}
	deltas := 0
	for _, r := range all {
		if r.Event.Kind == FeedText && r.Event.Step == 2 {
			deltas++
		}
	}
	if deltas < 2 {
		t.Errorf("the answer came in %d text events, want it in pieces as it streamed", deltas)
	}

	// The deltas are in the feed's history and not in the session's.
	delta := []byte(`"Kind":"text"`)
	if raw, _ := rawHistory(ctx, t, c, FeedID(s.ID(), 1)); !strings.Contains(string(raw), string(delta)) {
		t.Fatal("the feed's history has no text delta: the check below proves nothing")
	}
	if raw, _ := rawHistory(ctx, t, c, s.WorkflowID()); strings.Contains(string(raw), string(delta)) {
		t.Error("the session workflow's history holds a text delta")
	} else if !strings.Contains(string(raw), strings.Join(words, "")) {
		t.Error("the session's history lacks the final message")
	}
}

// rawHistory is a workflow's history as stored, and its count of events.
func rawHistory(ctx context.Context, t *testing.T, c client.Client, id string) (raw []byte, events int) {
	t.Helper()
	it := c.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, b...)
		events++
	}
	return raw, events
}
