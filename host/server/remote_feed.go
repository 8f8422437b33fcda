package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/kosong-host/kosong-host/host/loop"
	"github.com/kosong-host/kosong-host/host/streamjson"
	"github.com/kosong-host/kosong-host/providers"
)

// RemoteFeed is a RemoteSession whose turns' events stream live. Follow
// reads the feed of turn from the cursor from ("" its start), calling fn
// with each feed event's cursor and its host/loop events (none for some),
// in order, as they are published; a cursor given back as from resumes
// after that event. It returns nil after the turn's end (fn was given its
// loop.TurnEnded) or once the feed ended without one; fn's error, which
// stops it; or ctx's. A feed nothing was published to yet is waited for.
type RemoteFeed interface {
	Follow(ctx context.Context, turn int, from string, fn func(cursor string, evs []loop.Event) error) error
}

// feedGrace bounds the wait, once the engine says the followed turn
// ended, for the rest of its feed; then the history's events of what the
// feed did not show are logged, and the turn_end.
const feedGrace = 10 * time.Second

// feedRetry is the pause before following a feed again after an error.
const feedRetry = time.Second

// errFeedDone stops following a feed whose turn is no longer followed.
var errFeedDone = errors.New("the turn's end is logged")

// followFeed logs the followed turn's events from its feed, from the
// record's cursor, until the feed ends, stop is closed or the session
// closes; done is closed then.
func (s *session) followFeed(f RemoteFeed, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
		case <-s.stopFollow:
		case <-ctx.Done():
		}
		cancel()
	}()
	s.mu.Lock()
	turn, from := s.rec.Turn, s.rec.Cursor
	s.mu.Unlock()
	for {
		err := f.Follow(ctx, turn, from, func(cur string, evs []loop.Event) error { return s.logFeed(turn, cur, evs) })
		if err == nil || ctx.Err() != nil || errors.Is(err, errFeedDone) {
			return
		}
		s.srv.logger.Warn("server: the turn's feed cannot be read", "session", s.rec.ID, "turn", turn, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(feedRetry):
		}
		s.mu.Lock()
		from = s.rec.Cursor
		s.mu.Unlock()
	}
}

// logFeed logs the events of a feed event of turn, the record keeping its
// cursor. A tool call's result first says its approval request answered
// elsewhere when it was one; the turn's end, the requests left.
func (s *session) logFeed(turn int, cur string, levs []loop.Event) error {
	s.followMu.Lock()
	defer s.followMu.Unlock()
	s.mu.Lock()
	if s.rec.TurnEnded || s.rec.Turn != turn {
		s.mu.Unlock()
		return errFeedDone
	}
	s.rec.Cursor = cur
	s.mu.Unlock()
	var evs []any
	ended := false
	for _, e := range levs {
		switch e := e.(type) {
		case loop.StepStarted:
			s.mu.Lock()
			s.rec.FeedStep = max(s.rec.FeedStep, e.Step)
			s.mu.Unlock()
		case loop.ToolCallFinished:
			id := e.Call.ID
			s.mu.Lock()
			s.feedCalls[id] = true
			s.mu.Unlock()
			evs = append(evs, s.droppedRemote(func(key string) bool { return !strings.HasPrefix(key, id+"\x00") })...)
		case loop.TurnEnded, loop.TurnFailed:
			if !ended {
				ended = true
				evs = append(evs, s.droppedRemote(func(string) bool { return false })...)
				s.mu.Lock()
				s.rec.TurnEnded, s.ended = true, true
				s.mu.Unlock()
			}
		}
		if v := streamjson.FromLoop(e); v != nil {
			evs = append(evs, v)
		}
	}
	s.logRemote(evs...)
	if ended {
		return errFeedDone
	}
	return nil
}

// feedFallback are the events of the history's messages of the turn that
// started at turnStart which its feed did not log: the steps after
// feedStep, the last one the feed started, and that step's tool results
// not in logged.
func feedFallback(history []providers.Message, turnStart, feedStep int, logged map[string]bool) []any {
	var evs []any
	for _, ev := range remoteEvents(history, turnStart, turnStart) {
		step := feedStep + 1
		switch e := ev.(type) {
		case streamjson.StepStartEvent:
			step = e.Step
		case streamjson.TextEvent:
			step = e.Step
		case streamjson.ToolCallEvent:
			step = e.Step
		case streamjson.ToolResultEvent:
			if e.Step == feedStep && !logged[e.ID] {
				evs = append(evs, ev)
				continue
			}
			step = e.Step
		}
		if step > feedStep {
			evs = append(evs, ev)
		}
	}
	return evs
}
